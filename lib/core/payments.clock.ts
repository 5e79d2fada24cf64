import type { PaymentsRuntime } from './payments.runtime.js';

/**
 * The one clock shape of the package: milliseconds since the epoch, as a function or as any object
 * with `now()` (a `PaymentsRuntime` fits). Verifiers, `signWebhook`, the memory store and the
 * simulator take it, so a test can drive them all from one fake clock.
 *
 * @example new MemoryIdempotencyStore({ now: () => fakeNow })
 */
export type PaymentsClock = (() => number) | Pick<PaymentsRuntime, 'now'>;

/** Turns a clock option into a function; the system clock when absent. */
export function resolveClock(clock: PaymentsClock | undefined): () => number {
  if (clock === undefined) return () => Date.now();
  if (typeof clock === 'function') return clock;
  return () => clock.now();
}
