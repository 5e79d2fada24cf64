/**
 * Result of `IdempotencyStore.claim`:
 * - `claimed`: the caller owns the (event, handler) pair for the lease and must `complete` or `release` it;
 * - `done`: a previous delivery completed it, skip;
 * - `busy`: another delivery holds an unexpired lease.
 */
export type IdempotencyClaim =
  { status: 'claimed'; token: string; attempt: number } | { status: 'done' } | { status: 'busy' };

/**
 * Where the receiver records which (event id, handler) pairs are in flight or done. Implement it to
 * use another engine; the built-ins are `MemoryIdempotencyStore` and `RedisIdempotencyStore`.
 * Any method may reject (engine down): the receiver then answers 503 and runs nothing.
 */
export interface IdempotencyStore {
  /**
   * Atomically claims `key` for `leaseMs` unless it is done or leased by someone else. `attempt` counts
   * the claims granted for this key so far (1 on the first).
   */
  claim(key: string, leaseMs: number): Promise<IdempotencyClaim>;
  /** Marks `key` done for `retentionMs`, if `token` still owns it. */
  complete(key: string, token: string, retentionMs: number): Promise<void>;
  /** Drops the lease on `key` so a redelivery can run it again, only if `token` still owns it. */
  release(key: string, token: string): Promise<void>;
  /** Optional: release resources on application shutdown. */
  close?(): Promise<void>;
  /**
   * Optional: one round trip to the engine, for health checks (`nestjs-payments/health`). Rejects when
   * the engine does not answer. A store without it (the in-memory one) counts as healthy.
   */
  ping?(): Promise<void>;
}

/** Injection token of the store in use (same name as the interface, as `@nestjs/throttler` does). */
export const IdempotencyStore = Symbol('IdempotencyStore');
