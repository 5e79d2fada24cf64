import type { KeyableSignatureScheme } from '../../webhooks/contracts/keyable-signature-scheme.interface.js';
import { signatureSchemeOf } from '../signature-schemes.js';
import type { SimulatorSignatureOptions } from './payments-simulator.options.js';
import { randomUUID } from 'node:crypto';
import { PaymentsConfigurationError } from '../../errors/index.js';
import { isUuid } from '../../core/payments.uuid.js';
import type { PaymentEvent, PaymentEventType } from '../../webhooks/contracts/payment-event.types.js';
import { SimulatorHttpError } from './simulator-http.util.js';
import type { DeliveryTarget } from './webhook-delivery.engine.js';
import { PaymentsError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import { SIMULATOR_ARGUMENT_MESSAGES, SIMULATOR_MESSAGES } from './payments-simulator.messages.js';

/** The two kinds of intent the simulator keeps. */
export type IntentKind = 'payment_intent' | 'setup_intent';

/** An intent as the simulator stores it. */
export interface IntentRecord {
  kind: IntentKind;
  id: string;
  state: string;
  amount: number | undefined;
  capture_method: string | undefined;
  metadata: Record<string, unknown> | null;
  created_at: string;
  account: string;
}

/** An embed token: authorises one confirm of one intent until it expires. */
export interface EmbedTokenRecord {
  intentId: string;
  expiresAt: number;
  used: boolean;
}

/** A registered endpoint, with what the delivery engine needs. */
export interface EndpointRecord extends DeliveryTarget {
  events: string[] | null;
  created_at: string;
}

/** A registered webhook endpoint, as the simulator returns it. */
export interface SimulatedWebhookEndpoint {
  id: string;
  url: string;
  events: string[] | null;
  secret: string;
  created_at: string;
}

/** An emitted event: a WebhookEventPayload without `webhook_id`, which each endpoint's delivery fills in. */
export type SimulatedEvent<T extends PaymentEventType = PaymentEventType> = Omit<PaymentEvent<T>, 'webhook_id'>;

/** A payment or setup intent as the simulator returns it from a retrieve. */
export type SimulatedIntent = {
  id: string;
  state: string;
  amount?: number;
  capture_method?: string;
  metadata: Record<string, unknown> | null;
  created_at: string;
};

/**
 * The simulator's tables (API keys, intents, embed tokens, endpoints, emitted events) and the rules of
 * who may see what: an intent or endpoint belongs to the account of the key that created it.
 */
export class SimulatorState {
  readonly keys = new Map<string, { account: string; active: boolean }>();
  readonly intents = new Map<string, IntentRecord>();
  readonly embedTokens = new Map<string, EmbedTokenRecord>();
  readonly endpoints = new Map<string, EndpointRecord>();
  readonly events: SimulatedEvent[] = [];

  private readonly scheme: KeyableSignatureScheme;

  constructor(
    signature: SimulatorSignatureOptions,
    private readonly now: () => number,
  ) {
    this.scheme = signatureSchemeOf(signature, 'PaymentsSimulator({ signature })');
  }

  addApiKey(key: string, account: string): void {
    if (typeof key !== 'string' || key === '')
      throw new PaymentsConfigurationError('PaymentsSimulator apiKey', 'is empty', 'pass a non-empty key');
    this.keys.set(key, { account, active: true });
  }

  revokeApiKey(key: string): void {
    const entry = this.keys.get(key);
    if (entry !== undefined) entry.active = false;
  }

  /** The account of `apiKey`, or of the first key when none is given. */
  accountFor(apiKey: string | undefined): string {
    if (apiKey !== undefined) {
      const entry = this.keys.get(apiKey);
      if (entry === undefined)
        throw new PaymentsInvalidArgumentError(
          'PaymentsSimulator',
          'apiKey',
          SIMULATOR_ARGUMENT_MESSAGES.unknownApiKey,
        );
      return entry.account;
    }
    const first = this.keys.values().next();
    if (first.done === true) throw new PaymentsError(SIMULATOR_MESSAGES.noApiKey);
    return first.value.account;
  }

  createIntent(
    kind: IntentKind,
    account: string,
    amount: number | undefined,
    captureMethod: string | undefined,
    metadata: Record<string, unknown> | null,
  ): IntentRecord {
    const intent: IntentRecord = {
      kind,
      id: randomUUID(),
      state: 'requires_payment_method',
      amount,
      capture_method: captureMethod,
      metadata,
      created_at: new Date(this.now()).toISOString(),
      account,
    };
    this.intents.set(intent.id, intent);
    return intent;
  }

  /** The intent `id` of `kind`, if `account` owns it: else 404, or 403 for another account's. */
  ownedIntent(kind: IntentKind, id: string, account: string): IntentRecord {
    const intent = isUuid(id) ? this.intents.get(id) : undefined;
    if (intent === undefined || intent.kind !== kind)
      throw new SimulatorHttpError(404, 'not_found', `No such ${kind}.`);
    if (intent.account !== account)
      throw new SimulatorHttpError(403, 'forbidden', 'The API key may not reach this resource.');
    return intent;
  }

  snapshot(intent: IntentRecord): SimulatedIntent {
    const snapshot: SimulatedIntent = {
      id: intent.id,
      state: intent.state,
      metadata: intent.metadata,
      created_at: intent.created_at,
    };
    if (intent.amount !== undefined) snapshot.amount = intent.amount;
    if (intent.capture_method !== undefined) snapshot.capture_method = intent.capture_method;
    return snapshot;
  }

  createEndpoint(account: string, url: unknown, events: unknown, secret?: string): SimulatedWebhookEndpoint {
    let parsed: URL | undefined;
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new SimulatorHttpError(400, 'invalid_url', 'url must be an absolute http(s) URL.');
    }
    if (
      events !== undefined &&
      events !== null &&
      (!Array.isArray(events) || !events.every((e) => typeof e === 'string' && e !== ''))
    ) {
      throw new SimulatorHttpError(400, 'invalid_events', 'events must be an array of event names.');
    }
    secret ??= this.scheme.newSecret();
    const endpoint: EndpointRecord = {
      id: randomUUID(),
      url: parsed.toString(),
      secret,
      account,
      events: Array.isArray(events) ? [...(events as string[])] : null,
      created_at: new Date(this.now()).toISOString(),
    };
    this.endpoints.set(endpoint.id, endpoint);
    return { id: endpoint.id, url: endpoint.url, events: endpoint.events, secret, created_at: endpoint.created_at };
  }

  /** Endpoints of `account` subscribed to `type`. */
  subscribers(account: string, type: string): EndpointRecord[] {
    return [...this.endpoints.values()].filter(
      (e) => e.account === account && (e.events === null || e.events.includes(type) || e.events.includes('*')),
    );
  }
}
