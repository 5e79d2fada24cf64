import type { IdempotencyClaim, IdempotencyStore } from './idempotency-store.interface.js';

/**
 * Internal (not exported from the package): a store that knows its answers at once, as the in-memory
 * one does. The dispatcher calls these instead of awaiting the `IdempotencyStore` promises, so a
 * delivery handled from memory costs no promise and no microtask per store call. They throw where the
 * promise methods would reject.
 */
export interface SynchronousIdempotencyStore {
  claimNow(key: string, leaseMs: number): IdempotencyClaim;
  completeNow(key: string, token: string, retentionMs: number): void;
  releaseNow(key: string, token: string): void;
}

/** Where a store offers its synchronous methods (a getter, so that a replaced method turns them off). */
export const SYNCHRONOUS_STORE = Symbol('payments:synchronous_store');

/** The synchronous methods of `store`, when it has them and they are still its own. */
export function synchronousStoreOf(store: IdempotencyStore): SynchronousIdempotencyStore | undefined {
  return (store as { [SYNCHRONOUS_STORE]?: SynchronousIdempotencyStore })[SYNCHRONOUS_STORE];
}
