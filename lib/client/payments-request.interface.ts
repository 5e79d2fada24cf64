import type { PaymentsHttpMethod } from '../errors/payments.errors.js';

/** One value of a query parameter; arrays repeat the name (`?a=1&a=2`), `undefined` omits it. */
export type PaymentsQueryValue = string | number | boolean | undefined | ReadonlyArray<string | number | boolean>;

/** Query parameters of a `request()` call. */
export type PaymentsQuery = Readonly<Record<string, PaymentsQueryValue>>;

/**
 * A call to an operation of the service, for the operations the reference names without detail
 * (listing and inspecting webhook requests and attempts, resending a webhook request).
 *
 * @example { method: 'GET', path: '/webhook_requests', query: { limit: 10 } }
 */
export interface PaymentsRequest {
  method: PaymentsHttpMethod;
  /**
   * Path relative to `baseUrl`, starting with one `/` (e.g. `/webhook_requests`). Absolute URLs,
   * `//`, `.` / `..` segments, `?`, `#`, `\` and control characters are refused, so the API key can
   * never be sent to another host. Put query parameters in `query`.
   */
  path: string;
  query?: PaymentsQuery;
  /** Sent as JSON. */
  body?: unknown;
  /**
   * Extra request headers. `X-Api-Key`, `X-Api-Version` and `X-Account-Id` (never sent: the account
   * comes from the key), and the hop-by-hop headers Node manages, are dropped whatever their case.
   */
  headers?: Readonly<Record<string, string>>;
}

/** What the resources need from the transport (lets a test or a wrapper stand in for it). */
export interface PaymentsRequester {
  request<T = unknown>(request: PaymentsRequest): Promise<T>;
}
