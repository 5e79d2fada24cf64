import type { IdempotencyStore, RunCompletion, RunRelease } from '../contracts/idempotency-store.interface.js';

/** Waits between the background retries of a release that failed: about 31 s in all. */
export const RELEASE_RETRY_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000, 8000, 16_000];

/**
 * A run whose release failed (the store was unreachable: a database restart, a failover) would answer
 * every redelivery 409 until its lease ends (`claimTtlSeconds`, 300 s by default). This retries the
 * release in the background after each of `delays` until one succeeds, then gives up silently (the
 * lease still ends). A release is owner-only, so a retry never frees a run someone else claimed since.
 * The timers do not keep the process alive.
 */
export function retryReleaseLater(
  store: Pick<IdempotencyStore, 'release'>,
  key: string,
  release: RunRelease,
  delays: readonly number[] = RELEASE_RETRY_DELAYS_MS,
): void {
  retryLater(() => store.release(key, release), delays);
}

/**
 * The same for a completion that failed after the handler's effect was committed (the transactional
 * inbox): until the store records it, the run stays leased and every redelivery is answered 409 (it
 * never reaches the inbox row that would skip it). Owner-only as well.
 */
export function retryCompleteLater(
  store: Pick<IdempotencyStore, 'complete'>,
  key: string,
  completion: RunCompletion,
  delays: readonly number[] = RELEASE_RETRY_DELAYS_MS,
): void {
  retryLater(() => store.complete(key, completion), delays);
}

/** Calls `call` after each of `delays` until it resolves once; unref()ed timers. */
function retryLater(call: () => unknown, delays: readonly number[]): void {
  const after = (index: number): void => {
    const delay = delays[index];
    if (delay === undefined) return;
    const timer = setTimeout(() => {
      Promise.resolve()
        .then(call)
        .catch(() => after(index + 1));
    }, delay);
    timer.unref?.();
  };
  after(0);
}
