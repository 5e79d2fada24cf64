import { randomUUID } from 'node:crypto';
import type { KeyableSignatureScheme } from '../../webhooks/contracts/keyable-signature-scheme.interface.js';
import { signWebhook } from '../sign-webhook.js';
import { PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import type { PaymentEventType } from '../../webhooks/contracts/payment-event.types.js';
import { SIMULATOR_ARGUMENT_MESSAGES } from './payments-simulator.messages.js';
import type { IntentKind, IntentRecord, SimulatedEvent, SimulatorState } from './simulator-state.js';

/** Options of `PaymentsSimulator.emit`. */
export interface DirectEmitOptions {
  /** The key whose account owns a new intent. Default: the first key's. */
  apiKey?: string;
  /** Emit as the late delivery of an earlier state: the event shows it, the intent stays where it is. */
  late?: boolean;
}
import type { DeliveryBatchItem, WebhookDeliveryEngine } from './webhook-delivery.engine.js';

/**
 * The emission rules: which events a confirm outcome raises, and how each event becomes one signed
 * delivery per subscribed endpoint of the intent's account.
 */
export class SimulatorEventsEmitter {
  constructor(
    private readonly state: SimulatorState,
    private readonly engine: WebhookDeliveryEngine,
    private readonly scheme: KeyableSignatureScheme,
  ) {}

  /** The event types a confirm with `outcome` raises: the intent's own, plus `charge.*` for `automatic_async`. */
  static typesForOutcome(intent: Pick<IntentRecord, 'kind' | 'capture_method'>, outcome: string): string[] {
    const types: string[] = [`${intent.kind}.${outcome}`];
    if (intent.kind === 'payment_intent' && intent.capture_method === 'automatic_async') {
      if (outcome === 'succeeded') types.push('charge.succeeded');
      if (outcome === 'requires_capture') types.push('charge.requires_capture');
    }
    return types;
  }

  /**
   * Records the events and hands one batch (every event × subscribed endpoint of the intent's account) to
   * the engine. `asOf` overrides fields of the intent's snapshot (a late event shows an earlier state).
   */
  emit(intent: IntentRecord, types: string[], asOf: { state?: string } = {}): SimulatedEvent[] {
    const snapshot = { ...this.state.snapshot(intent), ...asOf };
    const batch: DeliveryBatchItem[] = [];
    const emitted: SimulatedEvent[] = [];
    for (const type of types) {
      const eventId = randomUUID();
      const base = { id: eventId, event: type, data: { [intent.kind]: snapshot }, metadata: null };
      emitted.push(base as SimulatedEvent);
      batch.push({
        eventId,
        event: type,
        targets: this.state.subscribers(intent.account, type),
        bodyFor: (target) =>
          JSON.stringify({ id: eventId, webhook_id: target.id, event: type, data: base.data, metadata: null }),
      });
    }
    this.state.events.push(...emitted);
    this.engine.enqueue(batch);
    return emitted.map((e) => structuredClone(e));
  }

  /**
   * `PaymentsSimulator.emit`: `type` for the intent `intentId` (moved to the state it names, or only
   * shown in it when `late`), or for a new intent. Refuses an unknown intent, and `late` without one.
   */
  emitDirect(type: PaymentEventType, intentId: string | undefined, options: DirectEmitOptions): SimulatedEvent {
    const kind: IntentKind = type.startsWith('setup_intent.') ? 'setup_intent' : 'payment_intent';
    const suffix = type.slice(type.indexOf('.') + 1);
    const charge = type.startsWith('charge.');
    // The intent state a charge event stands for (the events name no other).
    const named = charge ? (suffix === 'requires_capture' ? 'requires_capture' : 'succeeded') : suffix;
    if (options.late === true && intentId === undefined) {
      throw new PaymentsInvalidArgumentError(
        'PaymentsSimulator.emit',
        'intentId',
        SIMULATOR_ARGUMENT_MESSAGES.lateNeedsIntent,
      );
    }
    let intent: IntentRecord;
    if (intentId !== undefined) {
      const found = this.state.intents.get(intentId);
      if (found === undefined || found.kind !== kind) {
        throw new PaymentsInvalidArgumentError(
          'PaymentsSimulator.emit',
          'intentId',
          SIMULATOR_ARGUMENT_MESSAGES.noSuchIntent(kind),
        );
      }
      intent = found;
    } else {
      intent = this.state.createIntent(
        kind,
        this.state.accountFor(options.apiKey),
        kind === 'payment_intent' ? 1000 : undefined,
        charge ? 'automatic_async' : undefined,
        null,
      );
    }
    if (options.late === true) return this.emit(intent, [type], { state: named })[0]!;
    if (!charge || intentId === undefined) intent.state = named;
    return this.emit(intent, [type])[0]!;
  }

  /** Headers of one attempt, signed with the endpoint's secret in the simulator's scheme. */
  sign(rawBody: string, secret: string, msgId: string, timestamp: number): Record<string, string> {
    return signWebhook(rawBody, this.scheme.withSecrets(secret), { msgId, timestamp }).headers;
  }
}
