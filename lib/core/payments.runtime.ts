/**
 * Everything that waits or draws chance, in one injectable object, so that backoff, leases and
 * timestamp tolerance can be tested exactly and instantly. Provide your own under `PAYMENTS_RUNTIME`
 * (or pass `runtime` in the options) in tests.
 */
export interface PaymentsRuntime {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds. */
  sleep(ms: number): Promise<void>;
  /** A number in [0, 1). */
  random(): number;
}

/** The real clock, timers and `Math.random`. */
export const systemRuntime: PaymentsRuntime = Object.freeze({
  now: () => Date.now(),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
});

/** Token of the clock / sleep / random functions (`PaymentsRuntime`), injectable so tests are exact. */
export const PAYMENTS_RUNTIME = Symbol('PAYMENTS_RUNTIME');
