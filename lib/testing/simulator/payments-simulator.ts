import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PaymentsConfigurationError } from '../../errors/index.js';
import { isUuid } from '../../core/payments.uuid.js';
import type { PaymentEventType } from '../../webhooks/contracts/payment-event.types.js';
import type { KeyableSignatureScheme } from '../../webhooks/contracts/keyable-signature-scheme.interface.js';
import { signatureSchemeOf } from '../signature-schemes.js';
import { resolveClock, type VerifierClock } from '../../webhooks/verifiers/verifier-clock.js';
import type { WebhookVerifier } from '../../webhooks/contracts/webhook-verifier.interface.js';
import type {
  PaymentsSimulatorOptions,
  SimulatedWebhookAttempt,
  SimulatedWebhookRequest,
  SimulatorRequestCounts,
} from './payments-simulator.options.js';
import { authenticateApiRequest } from './simulator-auth.js';
import { SimulatorCheckoutHandler } from './simulator-checkout.handler.js';
import { SimulatorControls } from './simulator-controls.js';
import { SimulatorEventsEmitter, type DirectEmitOptions } from './simulator-events.emitter.js';
import { errorBody, sendJson, SimulatorHttpError } from './simulator-http.util.js';
import { matchSimulatorRoute, simulatorRoutes, type SimulatorRoute } from './simulator-routes.js';
import {
  SimulatorState,
  type SimulatedEvent,
  type SimulatedIntent,
  type SimulatedWebhookEndpoint,
} from './simulator-state.js';
import { WebhookDeliveryEngine } from './webhook-delivery.engine.js';
import { PaymentsError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import { SIMULATOR_ARGUMENT_MESSAGES, SIMULATOR_MESSAGES } from './payments-simulator.messages.js';
import { isTimerMs, MAX_TIMER_MS } from './simulator-timers.js';

export type { SimulatedEvent, SimulatedIntent, SimulatedWebhookEndpoint } from './simulator-state.js';

const DEFAULT_RETRY_SCHEDULE = [1_000, 5_000, 30_000, 120_000, 600_000];

/**
 * A local stand-in for the payment service (the sandbox): the documented endpoints, embedded checkout
 * tokens, and signed webhook deliveries with retries, plus controls to misbehave on purpose.
 *
 * This class is the thin front: options, the HTTP server, and the public methods. The parts are
 * `SimulatorState` (the tables), the route table (`simulator-routes.ts`) with its authentication,
 * `SimulatorCheckoutHandler` (tokens, form, confirm), `SimulatorEventsEmitter` (emission rules and
 * signing) and `WebhookDeliveryEngine` (deliveries and retries).
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

  readonly #scheme: KeyableSignatureScheme;
  readonly #host: string;
  readonly #state: SimulatorState;
  readonly #engine: WebhookDeliveryEngine;
  readonly #emitter: SimulatorEventsEmitter;
  readonly #routes: readonly SimulatorRoute[];
  readonly #counts: SimulatorRequestCounts = { api: 0, rateLimited: 0, byRoute: {} };
  #server: http.Server | undefined;
  #baseUrl: string | undefined;

  constructor(options: PaymentsSimulatorOptions = {}) {
    // Validates header, algorithm, encoding... now; every endpoint re-keys it with its own secret.
    this.#scheme = signatureSchemeOf(options.signature, 'PaymentsSimulator({ signature })');
    const ttl = options.embedTokenTtlSeconds ?? 3600;
    if (!(ttl > 0))
      throw new PaymentsConfigurationError(
        'PaymentsSimulator({ embedTokenTtlSeconds })',
        'is not a positive number',
        'pass a lifetime in seconds (default 3600)',
      );
    const schedule = options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE;
    if (!schedule.every((ms) => isTimerMs(ms))) {
      throw new PaymentsConfigurationError(
        'PaymentsSimulator({ retrySchedule })',
        `holds a delay that is negative, not a number or above ${MAX_TIMER_MS} ms (the longest a Node timer waits; a longer one fires after 1 ms)`,
        `pass delays in ms from 0 to ${MAX_TIMER_MS}, e.g. [10, 20, 40]`,
      );
    }
    const deliveryTimeoutMs = options.deliveryTimeoutMs ?? 10_000;
    if (!isTimerMs(deliveryTimeoutMs, 1)) {
      throw new PaymentsConfigurationError(
        'PaymentsSimulator({ deliveryTimeoutMs })',
        `is not a number of milliseconds from 1 to ${MAX_TIMER_MS} (the longest a Node timer waits)`,
        'pass how long one attempt may take, in ms (default 10000)',
      );
    }
    const now = resolveClock(options.now);
    this.#host = options.host ?? '127.0.0.1';
    this.#state = new SimulatorState(this.#scheme, now);
    for (const entry of options.apiKeys ?? []) {
      if (typeof entry === 'string') this.addApiKey(entry);
      else this.addApiKey(entry.key, entry.account);
    }
    this.#engine = new WebhookDeliveryEngine({
      sign: (rawBody, secret, msgId, timestamp) => this.#emitter.sign(rawBody, secret, msgId, timestamp),
      retrySchedule: [...schedule],
      timeoutMs: deliveryTimeoutMs,
      now,
      random: options.random ?? Math.random,
      controls: this.controls,
    });
    this.#emitter = new SimulatorEventsEmitter(this.#state, this.#engine, this.#scheme);
    const checkout = new SimulatorCheckoutHandler(this.#state, this.#emitter, now, ttl * 1000);
    this.#routes = simulatorRoutes({ state: this.#state, engine: this.#engine, checkout });
  }

  /** Starts listening (on `port`, or a free one) and resolves with the base URL, e.g. `http://127.0.0.1:41234`. */
  async start(port = 0): Promise<string> {
    if (this.#server !== undefined) throw new PaymentsError(SIMULATOR_MESSAGES.alreadyStarted);
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
    if (this.#baseUrl === undefined) throw new PaymentsError(SIMULATOR_MESSAGES.notStarted);
    return this.#baseUrl;
  }

  /** Accepts `key` from now on; keys given the same `account` share resources (key rotation). */
  addApiKey(key: string, account: string = `acct_${randomUUID()}`): this {
    this.#state.addApiKey(key, account);
    return this;
  }

  /** Makes `key` inactive: requests carrying it get 401. */
  revokeApiKey(key: string): this {
    this.#state.revokeApiKey(key);
    return this;
  }

  /**
   * Registers an endpoint without HTTP (same as `POST /webhook_endpoints` with `apiKey`). `secret` fixes
   * the endpoint's secret (in the scheme's form, e.g. `whsec_` + base64) instead of a fresh random one,
   * so an app can be configured with it before the simulator starts.
   *
   * @example
   * sim.registerWebhookEndpoint({ url: `${appUrl}/payments/webhooks`, secret: process.env.PAYMENTS_WEBHOOK_SECRET });
   */
  registerWebhookEndpoint(params: {
    url: string;
    events?: string[];
    apiKey?: string;
    secret?: string;
  }): SimulatedWebhookEndpoint {
    const { secret } = params;
    if (secret !== undefined) {
      if (typeof secret !== 'string' || secret === '')
        throw new PaymentsInvalidArgumentError(
          'PaymentsSimulator.registerWebhookEndpoint',
          'secret',
          SIMULATOR_ARGUMENT_MESSAGES.secretForm,
        );
      // Throws the scheme's own PaymentsConfigurationError (it never quotes the secret) on a malformed one.
      this.#scheme.withSecrets(secret);
    }
    return this.#state.createEndpoint(this.#state.accountFor(params.apiKey), params.url, params.events, secret);
  }

  /**
   * Emits `type` directly, without the iframe. With `intentId`, an intent event also moves that intent
   * to the state it names; without, a new intent is made.
   *
   * `late: true` (with `intentId`) emits it as the late delivery of an earlier state, as when the
   * service's delivery of an older event arrives after a newer one: the event's `data` shows the intent
   * in the state `type` names, while the intent stays where it is (a retrieve answers its current state).
   *
   * @example
   * sim.emit('payment_intent.succeeded', id);                          // the intent is now succeeded
   * sim.emit('payment_intent.requires_capture', id, { late: true });  // a stale event: it stays succeeded
   * sim.emit('payment_intent.errored_capture', id);                    // a real move to errored_capture
   */
  emit<T extends PaymentEventType>(type: T, intentId?: string, options: DirectEmitOptions = {}): SimulatedEvent<T> {
    return this.#emitter.emitDirect(type, intentId, options) as SimulatedEvent<T>;
  }

  /** Resolves when every delivery has succeeded or exhausted its retries; rejects after `timeoutMs` (default 10000). */
  waitForIdle(options: { timeoutMs?: number } = {}): Promise<void> {
    const { timeoutMs } = options;
    if (timeoutMs !== undefined && !isTimerMs(timeoutMs, 1)) {
      return Promise.reject(
        new PaymentsInvalidArgumentError(
          'PaymentsSimulator.waitForIdle',
          'timeoutMs',
          SIMULATOR_ARGUMENT_MESSAGES.timeoutMs,
        ),
      );
    }
    return this.#engine.waitForIdle(timeoutMs);
  }

  /** Every WebhookRequest so far, oldest first, each with its attempts. */
  webhookRequests(): Array<SimulatedWebhookRequest & { attempts: SimulatedWebhookAttempt[] }> {
    return this.#engine.list();
  }

  /** Every event emitted so far, oldest first. */
  events(): SimulatedEvent[] {
    return this.#state.events.map((e) => structuredClone(e));
  }

  /** Current state of an intent, or undefined. */
  intent(id: string): SimulatedIntent | undefined {
    const record = this.#state.intents.get(id);
    return record === undefined ? undefined : this.#state.snapshot(record);
  }

  /** Counters of the requests received. */
  requestCounts(): SimulatorRequestCounts {
    return { api: this.#counts.api, rateLimited: this.#counts.rateLimited, byRoute: { ...this.#counts.byRoute } };
  }

  /** A verifier of this simulator's scheme for an endpoint `secret` (what the merchant would configure). */
  verifierFor(secrets: string | string[], options: { now?: VerifierClock } = {}): WebhookVerifier {
    return this.#scheme.withSecrets(secrets, { now: options.now });
  }

  /** Counts the request, finds its route, authenticates API routes, and turns a thrown `SimulatorHttpError` into its answer. */
  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://simulator.local');
      const method = req.method ?? 'GET';
      const segments = url.pathname.split('/').filter(Boolean);
      const routeName = `${method} /${segments.map((s) => (isUuid(s) ? ':id' : s)).join('/')}`;
      this.#counts.byRoute[routeName] = (this.#counts.byRoute[routeName] ?? 0) + 1;

      const match = matchSimulatorRoute(this.#routes, method, segments);
      if (match === undefined) throw new SimulatorHttpError(404, 'not_found', 'No such route.');
      let account = '';
      if (match.route.api) {
        this.#counts.api += 1;
        account = authenticateApiRequest(req, this.#state, this.controls, this.#counts);
      }
      return await match.route.handle({ req, res, url, params: match.params, account });
    } catch (error) {
      if (error instanceof SimulatorHttpError) {
        if (!res.headersSent) sendJson(res, error.status, errorBody(error.code, error.message), error.headers);
        return;
      }
      if (!res.headersSent) sendJson(res, 500, errorBody('internal_error', 'The simulator failed.'));
    }
  }
}
