import type { PaymentsRuntime } from '../core/payments.runtime.js';

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
  /**
   * Most bytes read of one response body; a larger answer ends the call with a
   * `PaymentsResponseTooLargeError` (nothing more is read or kept). Default 4194304 (4 MiB).
   */
  maxResponseBytes?: number;
}

/** What the client part of `PaymentsModuleOptions` is made of: the key, where to send it, how. */
export interface PaymentsClientOptions {
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
  /** Clock, sleep and randomness; tests inject their own. Default: the system's. */
  runtime?: PaymentsRuntime;
}

/**
 * The client options after validation, with every default filled in. Handed to `PaymentsService`
 * once, at boot; no provider holds it (the key then lives only in the client's transport).
 */
export interface ResolvedPaymentsClientOptions {
  apiKey: string;
  environment: PaymentsEnvironment;
  baseUrl: string;
  apiVersion: string;
  http: Required<PaymentsHttpOptions>;
  runtime: PaymentsRuntime;
}
