import type { PaymentsRuntime } from './core/payments.runtime.js';
import type { PaymentDeliveryListener } from './webhooks/journal/payment-delivery-listener.interface.js';
import type { IdempotencyStore } from './webhooks/stores/idempotency-store.interface.js';
import type { WebhookVerifier } from './webhooks/verifiers/webhook-verifier.interface.js';

/** The two environments of the service; each has its own base address and keys. */
export type PaymentsEnvironment = 'sandbox' | 'production';

export interface PaymentsHttpOptions {
  /** Per-attempt timeout in ms. Default 10000. */
  timeoutMs?: number;
  /** Retries after the first request (429 always; GET also on network errors and 502/503/504). Default 3. */
  maxRetries?: number;
  /** Cap of one backoff wait, `Retry-After` included, in ms. Default 30000. */
  maxRetryDelayMs?: number;
  /** First backoff step in ms (doubles each retry, full jitter). Default 500. */
  baseRetryDelayMs?: number;
}

/** A BullMQ connection: an ioredis client, or ioredis options. */
export type PaymentsQueueConnection = object;

export interface PaymentsQueueOptions {
  /** ioredis client (shared, not closed by the module) or ioredis options (the module owns that client). */
  connection: PaymentsQueueConnection;
  /** Queue name. Default 'payments-webhooks'. */
  name?: string;
  /** Attempts per job, first included. Default 10. */
  attempts?: number;
  /** Backoff between job attempts. Default { type: 'exponential', delay: 1000 }. */
  backoff?: { type: 'exponential' | 'fixed'; delay: number };
  /** Jobs a worker runs at once. Default 1. */
  concurrency?: number;
  /** Whether this instance runs a worker (an app may only enqueue). Default true. */
  worker?: boolean;
  /** Longest wait for Redis to accept a job before the delivery is answered 503, in ms. Default 5000. */
  enqueueTimeoutMs?: number;
  /** Lock of a running job; a worker that dies loses it after this long, in ms. Default 30000. */
  lockDurationMs?: number;
  /** How often workers look for jobs whose worker died (stalled), in ms. Default 30000. */
  stalledIntervalMs?: number;
}

export type PaymentsProcessingOptions = 'inline' | { queue: PaymentsQueueOptions };

export interface PaymentsWebhooksOptions {
  /** Route of the receiver. Default 'payments/webhooks'. With `forRootAsync`, also pass it as the static `webhooksPath`. */
  path?: string;
  /** REQUIRED: the reference shows no signature scheme, so there is no default. */
  verifier: WebhookVerifier;
  /** Accept only deliveries whose `webhook_id` is one of these endpoint ids. */
  endpointIds?: string[];
  /** Where (event id, handler) claims live. Default: a `MemoryIdempotencyStore`. */
  store?: IdempotencyStore;
  /** Opt-in observer of verified deliveries and handler runs, e.g. a `PaymentDeliveryJournal` for an operator page. Default none. */
  deliveryListener?: PaymentDeliveryListener;
  /** Lease of a claim while a handler runs, in seconds. Default 300. */
  claimTtlSeconds?: number;
  /** How long a completed (event, handler) is remembered, in seconds. Default 259200 (3 days). */
  retentionSeconds?: number;
  /** Largest accepted body in bytes (413 above). Default 1048576 (1 MiB). */
  maxBodyBytes?: number;
  /** Refuse plain HTTP with 403. Default: true in production, false in sandbox. */
  requireHttps?: boolean;
  /** 'inline' (default): handlers run before the answer. `{ queue }`: BullMQ, answer once enqueued. */
  processing?: PaymentsProcessingOptions;
}

/** Options of `PaymentsModule.forRoot` / the factory of `forRootAsync`. */
export interface PaymentsModuleOptions {
  /** Secret API key, sent as `X-Api-Key`. Never logged, never in an error. */
  apiKey: string;
  /** Must match the key: sandbox keys only work against the sandbox base address. */
  environment: PaymentsEnvironment;
  /** Base address of that environment (the reference gives none). Must be https: unless `allowInsecureHttp`. */
  baseUrl: string;
  /** Allow an http: `baseUrl` (the local simulator). Default false. */
  allowInsecureHttp?: boolean;
  /** Value of `X-Api-Version`. Default '1' (the only value the reference shows). */
  apiVersion?: string;
  http?: PaymentsHttpOptions;
  /** `false` registers no webhook route. */
  webhooks?: false | PaymentsWebhooksOptions;
  /** Clock, sleep and randomness; tests inject their own. Default: the system's. */
  runtime?: PaymentsRuntime;
}

/** The options after validation, with every default filled in. Frozen. */
export interface ResolvedPaymentsOptions {
  apiKey: string;
  environment: PaymentsEnvironment;
  baseUrl: string;
  apiVersion: string;
  http: Required<PaymentsHttpOptions>;
  webhooks: false | ResolvedWebhooksOptions;
  runtime: PaymentsRuntime;
}

export interface ResolvedWebhooksOptions {
  path: string;
  verifier: WebhookVerifier;
  endpointIds: ReadonlySet<string> | undefined;
  store: IdempotencyStore | undefined;
  deliveryListener: PaymentDeliveryListener | undefined;
  claimTtlSeconds: number;
  retentionSeconds: number;
  maxBodyBytes: number;
  requireHttps: boolean;
  processing: 'inline' | { queue: Required<Omit<PaymentsQueueOptions, 'connection'>> & { connection: PaymentsQueueConnection } };
}
