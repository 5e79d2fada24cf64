import type { Pending } from '../../core/payments.pending.js';
import type { IntentWatchStore } from './intent-watch-store.interface.js';

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
 * use another engine; the built-ins are `MemoryIdempotencyStore`, `RedisIdempotencyStore` and
 * `PostgresIdempotencyStore`. Any method may reject (engine down): the receiver then answers 503 and
 * runs nothing. A method answers a promise, or its value at once when it knows it without waiting
 * (`Pending<T>`, as the in-memory store does): the receiver then takes no promise and no microtask.
 */
export interface IdempotencyStore {
  /**
   * Atomically claims `key` for `leaseMs` unless it is done or leased by someone else. `attempt` counts
   * the claims granted for this key so far (1 on the first).
   */
  claim(key: string, leaseMs: number): Pending<IdempotencyClaim>;
  /** Marks `key` done for `retentionMs`, if `token` still owns it. */
  complete(key: string, token: string, retentionMs: number): Pending<void>;
  /** Drops the lease on `key` so a redelivery can run it again, only if `token` still owns it. */
  release(key: string, token: string): Pending<void>;
  /**
   * Optional, strongly recommended: extends the lease on `key` to `leaseMs` from now, only if `token`
   * still owns an unfinished claim (the owner check of `complete`). Resolves `true` when extended,
   * `false` when the lease is lost (another delivery claimed the key, or it was completed, released or
   * deleted). The receiver calls it every `claimTtlSeconds / 3` while a handler runs past that point,
   * so a handler that runs longer than its lease is never run a second time by a redelivery. A store
   * without it still works (the module warns at boot): a handler running past `claimTtlSeconds` may
   * then run twice. Optional so that stores written before it keep compiling.
   *
   * @example renew('evt:Handler.paid', token, 300_000) // true while the token owns the claim
   */
  renew?(key: string, token: string, leaseMs: number): Pending<boolean>;
  /**
   * Optional: `true` when this store takes claims of two keys at once as safely as one after the other,
   * because a call needs nothing that a concurrent call could take from it (ioredis sends every command
   * over one multiplexed connection; a pooled SQL store would check out a second connection, which may
   * be a broken one). A webhook of an intent's state is claimed under two keys: with this set, both
   * claims go out together (one round trip instead of two), and whatever one got that the other made
   * useless is let go (`release`). Unset: the second claim is sent once the first one is granted.
   * The outcome is that of one after the other, but for two races: a claim granted on the second key
   * while the first was refused counts in that key's `attempt`, and two copies of one delivery that
   * each get one key can both be answered `busy` (both redelivered; neither runs twice).
   * `RedisIdempotencyStore` sets it.
   */
  readonly concurrentClaims?: boolean;
  /**
   * Optional: a watch list for the reconciler (`webhooks.reconcile`) in this store's engine, so that the
   * processes of one instance share it. `instance` is the module instance's name (undefined for the
   * unnamed one): the list and its sweeper lease belong to that instance alone, never shared with
   * another instance using the same store (they hold other accounts' intents). The built-in stores have
   * one; without it the reconciler keeps its list in memory (one process only).
   */
  intentWatchStore?(instance?: string): IntentWatchStore;
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
