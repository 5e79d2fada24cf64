/** The store methods a background retry calls (an `IdempotencyStore`'s). */
interface RetriedStore {
  release(key: string, token: string): unknown;
  complete(key: string, token: string, retentionMs: number): unknown;
}

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
  store: Pick<RetriedStore, 'release'>,
  key: string,
  token: string,
  delays: readonly number[] = RELEASE_RETRY_DELAYS_MS,
): void {
  retryLater(() => store.release(key, token), delays);
}

/**
 * The same for a completion that failed after the inbox transaction committed: until the store records
 * it, the claim stays leased and every redelivery is answered 409 (it never reaches the inbox row that
 * would skip it). Owner-only as well.
 */
export function retryCompleteLater(
  store: Pick<RetriedStore, 'complete'>,
  key: string,
  token: string,
  retentionMs: number,
  delays: readonly number[] = RELEASE_RETRY_DELAYS_MS,
): void {
  retryLater(() => store.complete(key, token, retentionMs), delays);
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
