/** Why a timestamp header is refused. */
export type TimestampProblem = 'malformed_timestamp' | 'timestamp_out_of_tolerance';

const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * Parses a unix-seconds timestamp header and checks it is within `toleranceSeconds` of `nowMs`, in
 * both directions (a stale timestamp is a replay; a future one is a replay prepared in advance).
 */
export function checkTimestamp(
  raw: string,
  nowMs: number,
  toleranceSeconds: number,
): { ok: true; seconds: number } | { ok: false; reason: TimestampProblem } {
  if (!UNIX_SECONDS.test(raw)) return { ok: false, reason: 'malformed_timestamp' };
  const seconds = Number(raw);
  const nowSeconds = Math.floor(nowMs / 1000);
  if (Math.abs(nowSeconds - seconds) > toleranceSeconds) {
    return { ok: false, reason: 'timestamp_out_of_tolerance' };
  }
  return { ok: true, seconds };
}

/** Validates a `toleranceSeconds` option; returns the value or the default. */
export function isValidTolerance(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** Default tolerance, in seconds, of both built-in verifiers (the Standard Webhooks default). */
export const DEFAULT_TOLERANCE_SECONDS = 300;
