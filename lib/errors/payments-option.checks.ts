import { PaymentsConfigurationError } from './payments.errors.js';

/*
 * The checks every part's options validator shares (the client's, the receiver's, the queue's). Each
 * failure is a `PaymentsConfigurationError` naming the option and the fix, and never echoes a value
 * (only its type), so a key or a secret cannot end up in a message.
 */

/** Throws the `PaymentsConfigurationError` of `option`. */
export const fail = (option: string, problem: string, fix: string): never => {
  throw new PaymentsConfigurationError(option, problem, fix);
};

/** A plain object (not null, not an array). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Describes a value for an error message without echoing secrets (only its type). */
export const kind = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;

/** A number option: `fallback` when omitted, else a finite number >= `min` (whole unless `integer: false`). */
export function limit(
  value: unknown,
  option: string,
  fallback: number,
  { min = 0, integer = true }: { min?: number; integer?: boolean } = {},
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return fail(
      option,
      `must be a finite number, got ${kind(value)}`,
      `pass a number >= ${min}, or omit it for the default (${fallback})`,
    );
  }
  if (integer && !Number.isInteger(value)) {
    return fail(option, `must be a whole number, got ${value}`, `pass an integer >= ${min}`);
  }
  if (value < min) {
    return fail(
      option,
      `must be >= ${min}, got ${value}`,
      `pass a number >= ${min}, or omit it for the default (${fallback})`,
    );
  }
  return value;
}
