import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { ResolvedPaymentsClientOptions } from './payments-client.options.js';
import { PaymentsHttpTransport } from './payments-http.transport.js';
import type { PaymentsRequest, PaymentsRequester } from './payments-request.interface.js';
import { REDACTED } from './payments-secret.redactor.js';
import { CreatedIntentListeners, type CreatedIntentListener } from './payments-created-intents.js';
import type { PaymentsTelemetry } from '../telemetry/payments.telemetry.js';
import { PaymentIntentsResource } from './resources/payment-intents.resource.js';
import { SetupIntentsResource } from './resources/setup-intents.resource.js';
import { WebhookEndpointsResource } from './resources/webhook-endpoints.resource.js';

/**
 * The typed API client of the payment service. Inject it anywhere once `PaymentsModule` is imported
 * (the module is global by default); the client of a named instance with
 * `@InjectPaymentsService('eu')`.
 *
 * Every request carries `X-Api-Key` and `X-Api-Version`, never `X-Account-Id`; 429 is retried with
 * backoff; errors are `PaymentsApiError` subclasses or `PaymentsConnectionError` and never contain
 * the key. The key is held in a private field: `util.inspect` and `JSON.stringify` of the service
 * show `[REDACTED]`.
 *
 * @example
 * const intent = await this.payments.paymentIntents.create({ amount: 1999 });
 * const fresh = await this.payments.paymentIntents.retrieve(intent.id);
 */
@Injectable()
export class PaymentsService implements PaymentsRequester, OnModuleDestroy {
  /** `POST /payment_intents`, `GET /payment_intents/{id}`. */
  readonly paymentIntents: PaymentIntentsResource;
  /** `POST /setup_intents`, `GET /setup_intents/{id}`. */
  readonly setupIntents: SetupIntentsResource;
  /** `POST /webhook_endpoints`. */
  readonly webhookEndpoints: WebhookEndpointsResource;

  readonly #transport: PaymentsHttpTransport;
  readonly #created = new CreatedIntentListeners();
  readonly #environment: string;
  readonly #baseUrl: string;

  /**
   * Built by the module's client part from the validated options (no provider holds them, so the key
   * lives only in the transport). Construct one yourself only outside Nest, e.g. in a script.
   */
  constructor(options: ResolvedPaymentsClientOptions, telemetry?: PaymentsTelemetry) {
    this.#transport = new PaymentsHttpTransport(options, telemetry);
    this.#environment = options.environment;
    this.#baseUrl = options.baseUrl;
    const requester: PaymentsRequester = { request: (request) => this.#transport.request(request) };
    this.paymentIntents = new PaymentIntentsResource(requester, this.#created);
    this.setupIntents = new SetupIntentsResource(requester, this.#created);
    this.webhookEndpoints = new WebhookEndpointsResource(requester);
  }

  /**
   * Calls an operation the reference names without detail: listing and inspecting webhook requests
   * and attempts, resending a webhook request. `path` is relative to `baseUrl`; the answer's parsed
   * body is returned as `T` (unchecked: the reference does not show these shapes).
   *
   * @example
   * await payments.request({ method: 'GET', path: '/webhook_requests', query: { limit: 20 } });
   * await payments.request({ method: 'POST', path: `/webhook_requests/${id}/resend` });
   */
  request<T = unknown>(request: PaymentsRequest): Promise<T> {
    return this.#transport.request<T>(request);
  }

  /**
   * Calls `listener` after each intent this client creates (the reconciler of `webhooks.reconcile`
   * watches them this way). Returns the function that stops it.
   */
  onIntentCreated(listener: CreatedIntentListener): () => void {
    return this.#created.add(listener);
  }

  /** Closes the keep-alive sockets. */
  onModuleDestroy(): void {
    this.#transport.destroy();
  }

  /** What `util.inspect` / `console.log` show: never the key. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PaymentsService { environment: '${this.#environment}', baseUrl: '${this.#baseUrl}', apiKey: '${REDACTED}' }`;
  }

  /** What `JSON.stringify` shows: never the key. */
  toJSON(): Record<string, unknown> {
    return { environment: this.#environment, baseUrl: this.#baseUrl, apiKey: REDACTED };
  }
}
