import type { KeyableSignatureScheme } from '../../webhooks/contracts/keyable-signature-scheme.interface.js';
import type { HmacSchemeOptions } from '../../webhooks/verifiers/hmac.scheme.js';
import type { VerifierClock } from '../../webhooks/verifiers/verifier-clock.js';

/**
 * How the simulator signs deliveries: Standard Webhooks (default), an HMAC scheme described like
 * `hmacScheme`'s, or a keyable scheme object (`standardWebhooks(...)`, `hmacScheme(...)`,
 * `standardWebhooksEd25519(...)`, or your own `KeyableSignatureScheme`), which each endpoint re-keys with
 * its own secret (`withSecrets`, `newSecret`). A scheme without those two is refused with a
 * `PaymentsConfigurationError` naming `PaymentsSimulator({ signature })`.
 */
export type SimulatorSignatureOptions =
  | { scheme: 'standard-webhooks' }
  | ({ scheme: 'hmac' } & Omit<HmacSchemeOptions, 'secrets' | 'now' | 'toleranceSeconds'>)
  | KeyableSignatureScheme;

/** An API key the simulator accepts. Keys sharing an `account` see the same resources (key rotation). */
export interface SimulatorApiKey {
  key: string;
  /** Account the key belongs to. Default: an account of its own. */
  account?: string;
}

/** Options of `new PaymentsSimulator(options)`. Every field has a default. */
export interface PaymentsSimulatorOptions {
  /** Sandbox API keys accepted in `X-Api-Key`. A plain string is a key with an account of its own. Default none. */
  apiKeys?: ReadonlyArray<string | SimulatorApiKey>;
  /** Signature scheme of deliveries. Default `{ scheme: 'standard-webhooks' }`. */
  signature?: SimulatorSignatureOptions;
  /** Lifetime of embed tokens (and render tokens) in seconds. Default 3600. */
  embedTokenTtlSeconds?: number;
  /** Delays in ms (0 to 2147483647) before the 2nd, 3rd, ... attempt of a delivery; its length + 1 is the number of attempts. Default [1000, 5000, 30000, 120000, 600000]. */
  retrySchedule?: readonly number[];
  /** How long one delivery attempt may take before it counts as failed, in ms (1 to 2147483647). Default 10000. */
  deliveryTimeoutMs?: number;
  /** Clock (ms since epoch) for token expiry, timestamps and signatures. A `PaymentsRuntime` fits. Default `Date.now`. */
  now?: VerifierClock;
  /** Randomness for `shuffle` orders, in [0, 1). Default `Math.random`. */
  random?: () => number;
  /** Interface to listen on. Default '127.0.0.1'. */
  host?: string;
}

/** A recorded delivery job: one event to one endpoint (a WebhookRequest). Field names are the simulator's choice. */
export interface SimulatedWebhookRequest {
  id: string;
  event_id: string;
  event: string;
  /** The endpoint id (the payload's `webhook_id`). */
  webhook_id: string;
  url: string;
  /** held: waiting for `controls.release()`; queued: a sequential duplicate waiting for the previous copy. */
  status: 'held' | 'queued' | 'scheduled' | 'delivering' | 'succeeded' | 'failed';
  attempt_count: number;
  last_status_code: number | null;
  created_at: string;
  next_attempt_at: string | null;
  /** The exact body sent on every attempt. */
  body: string;
}

/** One try of a WebhookRequest (a WebhookAttempt). */
export interface SimulatedWebhookAttempt {
  id: string;
  webhook_request_id: string;
  attempt: number;
  started_at: string;
  finished_at: string | null;
  /** HTTP status of the answer; null when none came (timeout, refused). */
  status_code: number | null;
  /** 'timeout', a system error code, or `http_<status>` for a non-2xx answer; null on success. */
  error: string | null;
}

/** Counters of requests the simulator received. */
export interface SimulatorRequestCounts {
  /** Requests to the server API (the routes that need `X-Api-Key`). */
  api: number;
  /** API requests answered 429 by `controls.rateLimit`. */
  rateLimited: number;
  /** Every request, by `METHOD /route` (ids replaced by `:id`). */
  byRoute: Record<string, number>;
}
