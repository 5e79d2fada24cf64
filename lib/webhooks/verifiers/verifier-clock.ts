/**
 * The clock a verifier reads to check a timestamp: a function returning milliseconds since the epoch,
 * or any object with such a `now()` (a `PaymentsRuntime` fits). Injectable so tolerance tests are exact.
 */
export type VerifierClock = (() => number) | { now(): number };

/** Turns the `now` option into a function; the system clock when absent. */
export function resolveClock(clock: VerifierClock | undefined): () => number {
  if (clock === undefined) return () => Date.now();
  if (typeof clock === 'function') return clock;
  return () => clock.now();
}
