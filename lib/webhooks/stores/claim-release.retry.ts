import type { IdempotencyStore } from './idempotency-store.interface.js';

/** Waits between the background retries of a release that failed: about 31 s in all. */
export const RELEASE_RETRY_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000, 8000, 16_000];

/**
 * A claim whose release failed (the store was unreachable: a database restart, a failover) would
 * answer every redelivery 409 until its lease ends (`claimTtlSeconds`, 300 s by default). This retries
 * the release in the background after each of `delays` until one succeeds, then gives up silently (the
 * lease still ends). A release is owner-only, so a retry never frees a claim someone else took since.
 * The timers do not keep the process alive.
 */
export function retryReleaseLater(
  store: Pick<IdempotencyStore, 'release'>,
  key: string,
  token: string,
  delays: readonly number[] = RELEASE_RETRY_DELAYS_MS,
): void {
  const after = (index: number): void => {
    const delay = delays[index];
    if (delay === undefined) return;
    const timer = setTimeout(() => {
      Promise.resolve()
        .then(() => store.release(key, token))
        .catch(() => after(index + 1));
    }, delay);
    timer.unref?.();
  };
  after(0);
}
