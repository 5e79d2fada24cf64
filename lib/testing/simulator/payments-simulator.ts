import { randomBytes, randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PaymentsConfigurationError } from '../../errors/index.js';
import { isUuid } from '../../core/payments.uuid.js';
import type { PaymentEvent, PaymentEventType } from '../../webhooks/payment-event.types.js';
import { hmacVerifier, resolveHmacScheme } from '../../webhooks/verifiers/hmac.verifier.js';
import { standardWebhooksVerifier } from '../../webhooks/verifiers/standard-webhooks.verifier.js';
import { resolveClock, type VerifierClock } from '../../webhooks/verifiers/verifier-clock.js';
import type { WebhookVerifier } from '../../webhooks/verifiers/webhook-verifier.interface.js';
import { signWebhook } from '../sign-webhook.js';
import { PAYMENT_OUTCOMES, renderCheckoutPage, SETUP_OUTCOMES } from './checkout-page.html.js';
import type {
  PaymentsSimulatorOptions,
  SimulatedWebhookAttempt,
  SimulatedWebhookRequest,
  SimulatorApiKey,
  SimulatorRequestCounts,
  SimulatorSignatureOptions,
} from './payments-simulator.options.js';
import { RenderTokenCodec } from './render-token.codec.js';
import { SimulatorControls } from './simulator-controls.js';
import { errorBody, header, readJsonObject, sendHtml, sendJson, SimulatorHttpError } from './simulator-http.util.js';
import { WebhookDeliveryEngine, type DeliveryBatchItem, type DeliveryTarget } from './webhook-delivery.engine.js';

type IntentKind = 'payment_intent' | 'setup_intent';

interface IntentRecord {
  kind: IntentKind;
  id: string;
  state: string;
  amount: number | undefined;
  capture_method: string | undefined;
  metadata: Record<string, unknown> | null;
  created_at: string;
  account: string;
}

interface EmbedTokenRecord {
  intentId: string;
  expiresAt: number;
  used: boolean;
}

interface EndpointRecord extends DeliveryTarget {
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

const DEFAULT_RETRY_SCHEDULE = [1_000, 5_000, 30_000, 120_000, 600_000];

/**
 * A local stand-in for the payment service (the sandbox): the documented endpoints, embedded checkout
 * tokens, and signed webhook deliveries with retries, plus controls to misbehave on purpose.
 *
 * @example
 * const sim = new PaymentsSimulator({ apiKeys: ['sk_test'], retrySchedule: [10, 20] });
 * const baseUrl = await sim.start();
 * // ... PaymentsModule.forRoot({ apiKey: 'sk_test', environment: 'sandbox', baseUrl, allowInsecureHttp: true, ... })
 * await sim.waitForIdle();
 * await sim.stop();
 */
export class PaymentsSimulator {
  /** Switches for throttling, duplicate, out-of-order and delayed deliveries. */
  readonly controls = new SimulatorControls();

  readonly #signature: SimulatorSignatureOptions;
  readonly #now: () => number;
  readonly #embedTtlMs: number;
  readonly #host: string;
  readonly #keys = new Map<string, { account: string; active: boolean }>();
  readonly #intents = new Map<string, IntentRecord>();
  readonly #embedTokens = new Map<string, EmbedTokenRecord>();
  readonly #endpoints = new Map<string, EndpointRecord>();
  readonly #events: SimulatedEvent[] = [];
  readonly #renderTokens = new RenderTokenCodec();
  readonly #engine: WebhookDeliveryEngine;
  readonly #counts: SimulatorRequestCounts = { api: 0, rateLimited: 0, byRoute: {} };
  #server: http.Server | undefined;
  #baseUrl: string | undefined;

  constructor(options: PaymentsSimulatorOptions = {}) {
    this.#signature = options.signature ?? { scheme: 'standard-webhooks' };
    if (this.#signature.scheme === 'hmac') {
      // Validates header, algorithm, encoding... now, with a placeholder secret.
      resolveHmacScheme({ ...this.#signature, secrets: 'placeholder' });
    } else if (this.#signature.scheme !== 'standard-webhooks') {
      throw new PaymentsConfigurationError('PaymentsSimulator({ signature })', 'names an unknown scheme', "pass { scheme: 'standard-webhooks' } or { scheme: 'hmac', header, ... }");
    }
    const ttl = options.embedTokenTtlSeconds ?? 3600;
    if (!(ttl > 0)) throw new PaymentsConfigurationError('PaymentsSimulator({ embedTokenTtlSeconds })', 'is not a positive number', 'pass a lifetime in seconds (default 3600)');
    const schedule = options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE;
    if (!schedule.every((ms) => Number.isFinite(ms) && ms >= 0)) {
      throw new PaymentsConfigurationError('PaymentsSimulator({ retrySchedule })', 'holds a negative or non-finite delay', 'pass delays in ms, e.g. [10, 20, 40]');
    }
    this.#embedTtlMs = ttl * 1000;
    this.#now = resolveClock(options.now);
    this.#host = options.host ?? '127.0.0.1';
    for (const entry of options.apiKeys ?? []) {
      if (typeof entry === 'string') this.addApiKey(entry);
      else this.addApiKey(entry.key, entry.account);
    }
    this.#engine = new WebhookDeliveryEngine({
      sign: (rawBody, secret, msgId, timestamp) => this.#sign(rawBody, secret, msgId, timestamp),
      retrySchedule: [...schedule],
      timeoutMs: options.deliveryTimeoutMs ?? 10_000,
      now: this.#now,
      random: options.random ?? Math.random,
      controls: this.controls,
    });
  }

  /** Starts listening (on `port`, or a free one) and resolves with the base URL, e.g. `http://127.0.0.1:41234`. */
  async start(port = 0): Promise<string> {
    if (this.#server !== undefined) throw new Error('PaymentsSimulator is already started');
    const server = http.createServer((req, res) => void this.#handle(req, res));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.#host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.#baseUrl = `http://${host}:${address.port}`;
    return this.#baseUrl;
  }

  /** Stops the server, closes keep-alive sockets, cancels pending retries and aborts deliveries in flight. */
  async stop(): Promise<void> {
    this.#engine.stop();
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /** Base URL of the running simulator. */
  get baseUrl(): string {
    if (this.#baseUrl === undefined) throw new Error('PaymentsSimulator is not started: call `await sim.start()` first');
    return this.#baseUrl;
  }

  /** Accepts `key` from now on; keys given the same `account` share resources (key rotation). */
  addApiKey(key: string, account: string = `acct_${randomUUID()}`): this {
    if (typeof key !== 'string' || key === '') throw new PaymentsConfigurationError('PaymentsSimulator apiKey', 'is empty', 'pass a non-empty key');
    this.#keys.set(key, { account, active: true });
    return this;
  }

  /** Makes `key` inactive: requests carrying it get 401. */
  revokeApiKey(key: string): this {
    const entry = this.#keys.get(key);
    if (entry !== undefined) entry.active = false;
    return this;
  }

  /** Registers an endpoint without HTTP (same as `POST /webhook_endpoints` with `apiKey`). */
  registerWebhookEndpoint(params: { url: string; events?: string[]; apiKey?: string }): SimulatedWebhookEndpoint {
    const account = this.#accountFor(params.apiKey);
    return this.#createEndpoint(account, params.url, params.events);
  }

  /** Emits `type` directly, without the iframe. With `intentId`, an intent event also moves that intent to the state it names; without, a new intent is made. */
  emit<T extends PaymentEventType>(type: T, intentId?: string, options: { apiKey?: string } = {}): SimulatedEvent<T> {
    const kind: IntentKind = type.startsWith('setup_intent.') ? 'setup_intent' : 'payment_intent';
    const suffix = type.slice(type.indexOf('.') + 1);
    let intent: IntentRecord;
    if (intentId !== undefined) {
      const found = this.#intents.get(intentId);
      if (found === undefined || found.kind !== kind) throw new Error(`PaymentsSimulator.emit: no ${kind} with id ${intentId}`);
      intent = found;
    } else {
      const charge = type.startsWith('charge.');
      intent = this.#createIntent(kind, this.#accountFor(options.apiKey), kind === 'payment_intent' ? 1000 : undefined, charge ? 'automatic_async' : undefined, null);
    }
    if (!type.startsWith('charge.')) intent.state = suffix;
    else if (intentId === undefined) intent.state = suffix === 'requires_capture' ? 'requires_capture' : 'succeeded';
    return this.#emitEvents(intent, [type])[0] as SimulatedEvent<T>;
  }

  /** Resolves when every delivery has succeeded or exhausted its retries; rejects after `timeoutMs` (default 10000). */
  waitForIdle(options: { timeoutMs?: number } = {}): Promise<void> {
    return this.#engine.waitForIdle(options.timeoutMs);
  }

  /** Every WebhookRequest so far, oldest first, each with its attempts. */
  webhookRequests(): Array<SimulatedWebhookRequest & { attempts: SimulatedWebhookAttempt[] }> {
    return this.#engine.list();
  }

  /** Every event emitted so far, oldest first. */
  events(): SimulatedEvent[] {
    return this.#events.map((e) => structuredClone(e));
  }

  /** Current state of an intent, or undefined. */
  intent(id: string): SimulatedIntent | undefined {
    const record = this.#intents.get(id);
    return record === undefined ? undefined : this.#snapshot(record);
  }

  /** Counters of the requests received. */
  requestCounts(): SimulatorRequestCounts {
    return { api: this.#counts.api, rateLimited: this.#counts.rateLimited, byRoute: { ...this.#counts.byRoute } };
  }

  /** A verifier of this simulator's scheme for an endpoint `secret` (what the merchant would configure). */
  verifierFor(secrets: string | string[], options: { now?: VerifierClock } = {}): WebhookVerifier {
    if (this.#signature.scheme === 'standard-webhooks') return standardWebhooksVerifier({ secrets, now: options.now });
    return hmacVerifier({ ...this.#signature, secrets, now: options.now });
  }

  // ---------------------------------------------------------------- HTTP

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://simulator.local');
      const method = req.method ?? 'GET';
      const segments = url.pathname.split('/').filter(Boolean);
      const route = `${method} /${segments.map((s) => (isUuid(s) ? ':id' : s)).join('/')}`;
      this.#counts.byRoute[route] = (this.#counts.byRoute[route] ?? 0) + 1;

      if (segments[0] === 'embed') return await this.#handleEmbed(req, res, method, segments, url);
      const api = this.#apiRoute(method, segments);
      if (api === undefined) throw new SimulatorHttpError(404, 'not_found', 'No such route.');
      this.#counts.api += 1;
      const account = this.#authenticate(req);
      return await api(req, res, account);
    } catch (error) {
      if (error instanceof SimulatorHttpError) {
        if (!res.headersSent) sendJson(res, error.status, errorBody(error.code, error.message), error.headers);
        return;
      }
      if (!res.headersSent) sendJson(res, 500, errorBody('internal_error', 'The simulator failed.'));
    }
  }

  #apiRoute(method: string, s: string[]): ((req: http.IncomingMessage, res: http.ServerResponse, account: string) => Promise<void>) | undefined {
    const [root, id, sub, extra] = s;
    if (extra !== undefined) return undefined;
    if ((root === 'payment_intents' || root === 'setup_intents') && sub === undefined) {
      const kind: IntentKind = root === 'payment_intents' ? 'payment_intent' : 'setup_intent';
      if (method === 'POST' && id === undefined) return (req, res, account) => this.#postIntent(kind, req, res, account);
      if (method === 'GET' && id !== undefined) return async (_req, res, account) => sendJson(res, 200, this.#snapshot(this.#ownedIntent(kind, id, account)));
    }
    if (root === 'webhook_endpoints' && method === 'POST' && id === undefined) {
      return async (req, res, account) => {
        const body = await readJsonObject(req);
        sendJson(res, 201, this.#createEndpoint(account, body['url'], body['events']));
      };
    }
    if (root === 'webhook_requests') {
      if (method === 'GET' && id === undefined) return async (_req, res, account) => sendJson(res, 200, { data: this.#engine.listFor(account) });
      if (method === 'GET' && id !== undefined && sub === undefined) return async (_req, res, account) => sendJson(res, 200, this.#ownedRequest(id, account).record);
      if (method === 'GET' && id !== undefined && sub === 'attempts') return async (_req, res, account) => sendJson(res, 200, { data: this.#ownedRequest(id, account).attempts });
      if (method === 'POST' && id !== undefined && sub === 'resend') {
        return async (_req, res, account) => {
          this.#ownedRequest(id, account);
          if (this.#engine.resend(id) === 'busy') throw new SimulatorHttpError(409, 'delivery_in_progress', 'The request is being delivered or waiting; resend it once it has finished.');
          sendJson(res, 202, this.#engine.get(id)!.record);
        };
      }
    }
    return undefined;
  }

  /** Throttling, then the header rules of the reference: no X-Account-Id, a known active key, a version. */
  #authenticate(req: http.IncomingMessage): string {
    const retryAfter = this.controls.takeRateLimit();
    if (retryAfter !== undefined) {
      this.#counts.rateLimited += 1;
      throw new SimulatorHttpError(429, 'rate_limited', 'Too many requests.', { 'retry-after': String(retryAfter) });
    }
    if (header(req, 'x-account-id') !== undefined) {
      throw new SimulatorHttpError(400, 'account_header_not_allowed', 'X-Account-Id must not be sent: the account comes from the API key.');
    }
    const key = header(req, 'x-api-key');
    const entry = key === undefined ? undefined : this.#keys.get(key);
    if (entry === undefined || !entry.active) throw new SimulatorHttpError(401, 'unauthorized', 'The API key is missing or inactive.');
    const version = header(req, 'x-api-version');
    if (version === undefined) throw new SimulatorHttpError(400, 'missing_api_version', 'The X-Api-Version header is required.');
    if (version !== '1') throw new SimulatorHttpError(400, 'unsupported_api_version', 'Only X-Api-Version 1 is supported.');
    return entry.account;
  }

  async #postIntent(kind: IntentKind, req: http.IncomingMessage, res: http.ServerResponse, account: string): Promise<void> {
    const body = await readJsonObject(req);
    const amount = body['amount'];
    if (amount !== undefined && (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 0)) {
      throw new SimulatorHttpError(400, 'invalid_amount', 'amount must be an integer >= 0.');
    }
    const captureMethod = body['capture_method'];
    if (captureMethod !== undefined && typeof captureMethod !== 'string') throw new SimulatorHttpError(400, 'invalid_capture_method', 'capture_method must be a string.');
    const metadata = body['metadata'];
    if (metadata !== undefined && metadata !== null && (typeof metadata !== 'object' || Array.isArray(metadata))) {
      throw new SimulatorHttpError(400, 'invalid_metadata', 'metadata must be an object or null.');
    }
    const origins = this.#origins(body['allowed_origins']);

    const intent = this.#createIntent(
      kind,
      account,
      kind === 'payment_intent' ? (amount as number | undefined) : undefined,
      kind === 'payment_intent' ? ((captureMethod as string | undefined) ?? 'automatic_async') : undefined,
      (metadata as Record<string, unknown> | null | undefined) ?? null,
    );
    const expiresAt = this.#now() + this.#embedTtlMs;
    const embedToken = `emb_${randomBytes(24).toString('base64url')}`;
    this.#embedTokens.set(embedToken, { intentId: intent.id, expiresAt, used: false });
    const renderToken = this.#renderTokens.encode({ intentId: intent.id, kind, origins, methods: ['card'], environment: 'sandbox', expiresAt });
    sendJson(res, 201, {
      ...this.#snapshot(intent),
      embed_token: embedToken,
      embed_token_expires_at: new Date(expiresAt).toISOString(),
      render_token: renderToken,
    });
  }

  #origins(value: unknown): string[] {
    if (value === undefined || value === null) return ['*'];
    if (!Array.isArray(value) || value.length === 0) throw new SimulatorHttpError(400, 'invalid_allowed_origins', 'allowed_origins must be a non-empty array of origins.');
    return value.map((origin) => {
      let parsed: URL | undefined;
      try {
        parsed = typeof origin === 'string' ? new URL(origin) : undefined;
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || parsed.origin !== origin) {
        throw new SimulatorHttpError(400, 'invalid_allowed_origins', 'Each allowed origin must be scheme://host[:port], without a path.');
      }
      return origin;
    });
  }

  async #handleEmbed(req: http.IncomingMessage, res: http.ServerResponse, method: string, segments: string[], url: URL): Promise<void> {
    const action = segments.length === 2 ? segments[1] : undefined;
    if (method === 'GET' && action === 'checkout') {
      const claims = this.#renderTokens.decode(url.searchParams.get('token') ?? '', this.#now());
      const intent = claims === undefined ? undefined : this.#intents.get(claims.intentId);
      if (claims === undefined || intent === undefined) {
        return sendHtml(res, 401, '<!doctype html><title>Checkout</title><p>This checkout link is invalid or has expired.</p>');
      }
      const nonce = randomBytes(16).toString('base64');
      const ancestors = claims.origins.includes('*') ? '*' : claims.origins.join(' ');
      return sendHtml(res, 200, renderCheckoutPage(claims, intent, nonce), {
        'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`,
      });
    }
    if (method === 'POST' && action === 'confirm') return this.#confirm(req, res);
    throw new SimulatorHttpError(404, 'not_found', 'No such route.');
  }

  /** The iframe's confirm: one per embed token, before it expires. */
  async #confirm(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const match = /^Embed\s+(\S+)$/i.exec(header(req, 'authorization') ?? '');
    if (match === null) throw new SimulatorHttpError(401, 'missing_embed_token', 'Send Authorization: Embed <embed token>.');
    const token = this.#embedTokens.get(match[1]!);
    if (token === undefined) throw new SimulatorHttpError(401, 'invalid_embed_token', 'The embed token is not known.');
    if (this.#now() >= token.expiresAt) throw new SimulatorHttpError(401, 'embed_token_expired', 'The embed token has expired.');
    if (token.used) throw new SimulatorHttpError(409, 'embed_token_used', 'The embed token has already confirmed its intent.');
    const body = await readJsonObject(req);
    const intent = this.#intents.get(token.intentId)!;
    const outcome = body['outcome'] ?? 'succeeded';
    const allowed: readonly string[] = intent.kind === 'payment_intent' ? PAYMENT_OUTCOMES : SETUP_OUTCOMES;
    if (typeof outcome !== 'string' || !allowed.includes(outcome)) {
      throw new SimulatorHttpError(400, 'invalid_outcome', `outcome must be one of ${allowed.join(', ')}.`);
    }
    // Re-checked after the body was read: two confirms racing with one token must not both pass.
    if (token.used) throw new SimulatorHttpError(409, 'embed_token_used', 'The embed token has already confirmed its intent.');
    token.used = true;
    intent.state = outcome;
    const types: string[] = [`${intent.kind}.${outcome}`];
    if (intent.kind === 'payment_intent' && intent.capture_method === 'automatic_async') {
      if (outcome === 'succeeded') types.push('charge.succeeded');
      if (outcome === 'requires_capture') types.push('charge.requires_capture');
    }
    this.#emitEvents(intent, types);
    sendJson(res, 200, { id: intent.id, object: intent.kind, state: intent.state });
  }

  // ---------------------------------------------------------------- state

  #accountFor(apiKey: string | undefined): string {
    if (apiKey !== undefined) {
      const entry = this.#keys.get(apiKey);
      if (entry === undefined) throw new Error('PaymentsSimulator: unknown apiKey');
      return entry.account;
    }
    const first = this.#keys.values().next();
    if (first.done === true) throw new Error('PaymentsSimulator: no API key registered; pass `apiKeys` or call addApiKey()');
    return first.value.account;
  }

  #createIntent(kind: IntentKind, account: string, amount: number | undefined, captureMethod: string | undefined, metadata: Record<string, unknown> | null): IntentRecord {
    const intent: IntentRecord = {
      kind,
      id: randomUUID(),
      state: 'requires_payment_method',
      amount,
      capture_method: captureMethod,
      metadata,
      created_at: new Date(this.#now()).toISOString(),
      account,
    };
    this.#intents.set(intent.id, intent);
    return intent;
  }

  #ownedIntent(kind: IntentKind, id: string, account: string): IntentRecord {
    const intent = isUuid(id) ? this.#intents.get(id) : undefined;
    if (intent === undefined || intent.kind !== kind) throw new SimulatorHttpError(404, 'not_found', `No such ${kind}.`);
    if (intent.account !== account) throw new SimulatorHttpError(403, 'forbidden', 'The API key may not reach this resource.');
    return intent;
  }

  #ownedRequest(id: string, account: string): { record: SimulatedWebhookRequest; attempts: SimulatedWebhookAttempt[] } {
    const found = isUuid(id) ? this.#engine.get(id) : undefined;
    if (found === undefined) throw new SimulatorHttpError(404, 'not_found', 'No such webhook request.');
    if (found.account !== account) throw new SimulatorHttpError(403, 'forbidden', 'The API key may not reach this resource.');
    return found;
  }

  #snapshot(intent: IntentRecord): SimulatedIntent {
    const snapshot: SimulatedIntent = { id: intent.id, state: intent.state, metadata: intent.metadata, created_at: intent.created_at };
    if (intent.amount !== undefined) snapshot.amount = intent.amount;
    if (intent.capture_method !== undefined) snapshot.capture_method = intent.capture_method;
    return snapshot;
  }

  #createEndpoint(account: string, url: unknown, events: unknown): SimulatedWebhookEndpoint {
    let parsed: URL | undefined;
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new SimulatorHttpError(400, 'invalid_url', 'url must be an absolute http(s) URL.');
    }
    if (events !== undefined && events !== null && (!Array.isArray(events) || !events.every((e) => typeof e === 'string' && e !== ''))) {
      throw new SimulatorHttpError(400, 'invalid_events', 'events must be an array of event names.');
    }
    const secret = this.#signature.scheme === 'standard-webhooks' ? `whsec_${randomBytes(24).toString('base64')}` : randomBytes(32).toString('hex');
    const endpoint: EndpointRecord = {
      id: randomUUID(),
      url: parsed.toString(),
      secret,
      account,
      events: Array.isArray(events) ? [...(events as string[])] : null,
      created_at: new Date(this.#now()).toISOString(),
    };
    this.#endpoints.set(endpoint.id, endpoint);
    return { id: endpoint.id, url: endpoint.url, events: endpoint.events, secret, created_at: endpoint.created_at };
  }

  /** Records the events and hands one batch (every event × subscribed endpoint of the intent's account) to the engine. */
  #emitEvents(intent: IntentRecord, types: string[]): SimulatedEvent[] {
    const snapshot = this.#snapshot(intent);
    const batch: DeliveryBatchItem[] = [];
    const emitted: SimulatedEvent[] = [];
    for (const type of types) {
      const eventId = randomUUID();
      const base = { id: eventId, event: type, data: { [intent.kind]: snapshot }, metadata: null };
      emitted.push(base as SimulatedEvent);
      const targets = [...this.#endpoints.values()].filter(
        (e) => e.account === intent.account && (e.events === null || e.events.includes(type) || e.events.includes('*')),
      );
      batch.push({
        eventId,
        event: type,
        targets,
        bodyFor: (target) => JSON.stringify({ id: eventId, webhook_id: target.id, event: type, data: base.data, metadata: null }),
      });
    }
    this.#events.push(...emitted);
    this.#engine.enqueue(batch);
    return emitted.map((e) => structuredClone(e));
  }

  #sign(rawBody: string, secret: string, msgId: string, timestamp: number): Record<string, string> {
    const signature = this.#signature;
    const signed =
      signature.scheme === 'standard-webhooks'
        ? signWebhook(rawBody, { scheme: 'standard-webhooks', secret, msgId, timestamp })
        : signWebhook(rawBody, { ...signature, secret, timestamp });
    return signed.headers;
  }
}
