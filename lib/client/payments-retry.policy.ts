import type { PaymentsHttpMethod } from '../errors/payments.errors.js';

/** Statuses after which a GET is sent again (a POST never: it may have been processed). */
export const RETRYABLE_GET_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** Connection error code proving a request never reached the service, so even a POST may be re-sent. */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED']);

/**
 * Whether an HTTP answer is retried: 429 for every method (the service refused to process it);
 * 502/503/504 for GET only. 401, 403 and every other status never are.
 */
export function isRetryableStatus(method: PaymentsHttpMethod, status: number): boolean {
  if (status === 429) return true;
  return method === 'GET' && RETRYABLE_GET_STATUSES.has(status);
}

/**
 * Whether a request that got no HTTP answer is retried: a GET always (reading twice is harmless);
 * any other method only when the connection was refused, i.e. the request provably never left.
 */
export function isRetryableConnectionError(method: PaymentsHttpMethod, code: string): boolean {
  return method === 'GET' || NOT_SENT_CODES.has(code);
}

/**
 * Exponential backoff with full jitter: `random() * min(maxDelayMs, baseDelayMs * 2^retryIndex)`,
 * where `retryIndex` is 0 before the first retry.
 *
 * @example backoffDelayMs(2, { baseDelayMs: 500, maxDelayMs: 30_000, random: () => 0.5 }) // 1000
 */
export function backoffDelayMs(
  retryIndex: number,
  { baseDelayMs, maxDelayMs, random }: { baseDelayMs: number; maxDelayMs: number; random: () => number },
): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** retryIndex);
  return random() * ceiling;
}

/**
 * Parses a `Retry-After` header (delay in seconds, or an HTTP date) into milliseconds from `nowMs`.
 * Returns `undefined` when absent or unreadable; a date in the past gives 0.
 */
export function parseRetryAfterMs(value: unknown, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' && typeof raw !== 'number') return undefined;
  const text = String(raw).trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  // An HTTP date names its month (`Wed, 21 Oct 2026 07:28:00 GMT`); anything else is unreadable.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * The wait before retry number `retryIndex + 1`: exactly `Retry-After` when the service sent one,
 * else the jittered backoff; in both cases at most `maxDelayMs`.
 */
export function retryDelayMs(
  retryIndex: number,
  retryAfterMs: number | undefined,
  policy: { baseDelayMs: number; maxDelayMs: number; random: () => number },
): number {
  if (retryAfterMs !== undefined) return Math.min(policy.maxDelayMs, retryAfterMs);
  return backoffDelayMs(retryIndex, policy);
}
