import { PaymentsError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import { STORE_ARGUMENT_MESSAGES } from '../contracts/payments-webhooks.messages.js';
import { resolveClock, type PaymentsClock } from '../../core/payments.clock.js';
import { DEFAULT_RETENTION_SECONDS } from '../../core/payments.defaults.js';
import { PendingRejection, type Pending } from '../../core/payments.pending.js';
import { MemoryIntentWatchStore } from './memory-intent-watch.store.js';
import type { IdempotencyClaim, IdempotencyStore } from '../contracts/idempotency-store.interface.js';

/** Options of `MemoryIdempotencyStore`. */
export interface MemoryIdempotencyStoreOptions {
  /**
   * Most (event, handler) keys kept. Default 100000. Beyond it the least recently used completed (or
   * released) key goes first; a running handler's lease is never evicted (a store full of them
   * refuses new claims: 503). Size it above (events per retention period x handlers): an evicted
   * "done" key runs again if the service redelivers it.
   */
  maxEntries?: number;
  /**
   * How long, in seconds, a completed key is remembered when `complete` is given no positive
   * retention, and how long a released key keeps its attempt count. Default `DEFAULT_RETENTION_SECONDS` (3 days).
   */
  retentionSeconds?: number;
  /** Clock in ms since the epoch (a `PaymentsRuntime` fits). Default `Date.now`. */
  now?: PaymentsClock;
  /**
   * Most intents the reconciler's in-memory watch list beside it holds (`webhooks.reconcile`). Default
   * 100000; beyond it an intent is not watched (a warning names it and this option; its webhook still
   * settles it).
   */
  maxWatchedIntents?: number;
}

type Lease = { token: string; attempt: number; expiresAt: number };
/**
 * A settled key: completed (`done`) as a bare number, its expiry in ms after the store's `#base`; a
 * released one (failed run) as an object that keeps its attempt count and its absolute `expiresAt`.
 * A completed key, what the store holds most of (one or two per handled delivery), is then no object
 * at all: an expiry counted from `#base` is a small integer, which V8 keeps in the map's slot, where
 * an epoch time in ms would be a boxed number: one object fewer per key for the garbage collector.
 */
type Released = { attempt: number; expiresAt: number };
type Settled = number | Released;

/**
 * How far `#base` may fall behind the clock before the completed keys are counted again from now
 * (about 6 days). V8 keeps integers below 2^30 unboxed on every build, pointer compression or not:
 * an expiry up to 6 more days ahead (the default retention is 3) stays below it.
 */
const REBASE_AFTER_MS = 2 ** 29;

const DONE: IdempotencyClaim = Object.freeze({ status: 'done' });
const BUSY: IdempotencyClaim = Object.freeze({ status: 'busy' });

/**
 * The default `IdempotencyStore`: a bounded map in this process. Right for one instance; with
 * several instances, use `RedisIdempotencyStore` so that they share claims. A restart forgets every
 * claim, which is safe for in-flight work (the service redelivers) but lets an already handled event
 * run again if it is redelivered after the restart.
 *
 * At most `maxEntries` keys are held. A live lease (a handler running now) is never evicted: when
 * the store is full of live leases, `claim` rejects, so the receiver answers 503 and the service
 * redelivers later, rather than letting a copy of a running event run its handler concurrently.
 * Settled keys (completed, or released after a failure) make room, least recently used first: a
 * completed key evicted that way runs its handler again if the service redelivers that event.
 *
 * @example PaymentsModule.forRoot({ ..., webhooks: { verifier, store: new MemoryIdempotencyStore({ maxEntries: 50_000 }) } })
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  /** Claims in flight, in claim order (so the first one is the first to expire). Never evicted while live. */
  readonly #leases = new Map<string, Lease>();
  /**
   * Completed and released keys, least recently used first: a Map keeps insertion order, so a key is
   * moved to the end by deleting and setting it again, and the first key is the one to evict.
   */
  readonly #settled = new Map<string, Settled>();
  readonly #maxEntries: number;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #maxWatchedIntents: number | undefined;
  /** Last lease token handed out: tokens only need to be unique within this store (this process). */
  #lastToken = 0;
  /** The time completed keys' expiries are counted from (see `Settled`). */
  #base: number;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    const retentionSeconds = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new PaymentsInvalidArgumentError(
        'MemoryIdempotencyStore',
        'maxEntries',
        STORE_ARGUMENT_MESSAGES.memoryMaxEntries,
      );
    }
    if (!Number.isFinite(retentionSeconds) || retentionSeconds <= 0) {
      throw new PaymentsInvalidArgumentError(
        'MemoryIdempotencyStore',
        'retentionSeconds',
        STORE_ARGUMENT_MESSAGES.positiveSeconds,
      );
    }
    this.#maxEntries = maxEntries;
    this.#retentionMs = retentionSeconds * 1000;
    this.#now = resolveClock(options.now);
    this.#base = this.#now();
    this.#maxWatchedIntents = options.maxWatchedIntents;
    // Checked here, at boot, rather than when the reconciler first asks for its list.
    if (options.maxWatchedIntents !== undefined) this.intentWatchStore();
  }

  /** Number of keys held (expired ones included until they are touched or evicted). */
  get size(): number {
    return this.#leases.size + this.#settled.size;
  }

  /** The reconciler's watch list beside it: in this process too. */
  intentWatchStore(): MemoryIntentWatchStore {
    return new MemoryIntentWatchStore({
      now: this.#now,
      maxIntents: this.#maxWatchedIntents,
      optionOf: { where: 'MemoryIdempotencyStore', argument: 'maxWatchedIntents' },
    });
  }

  async close(): Promise<void> {
    this.#leases.clear();
    this.#settled.clear();
  }

  /**
   * Claims `key`, answered at once. When `maxEntries` keys are held and every one is a live lease, it
   * rejects with a `PaymentsError` (the receiver answers 503, the service redelivers).
   */
  claim(key: string, leaseMs: number): Pending<IdempotencyClaim> {
    const now = this.#now();
    const lease = this.#leases.get(key);
    if (lease !== undefined) {
      if (lease.expiresAt > now) return BUSY;
      // The owner crashed or overran its lease: claim it again (moved last, with the latest expiry).
      this.#leases.delete(key);
      return this.#lease(key, lease.attempt + 1, now, leaseMs);
    }
    let attempt = 1;
    const settled = this.#settled.get(key);
    if (settled !== undefined) {
      this.#settled.delete(key);
      if (typeof settled === 'number') {
        if (settled > now - this.#base) {
          // Most recently used now: a key that keeps being redelivered is the last to be evicted.
          this.#settled.set(key, settled);
          return DONE;
        }
      } else if (settled.expiresAt > now) {
        // Released by a failed run: the next run counts the attempt.
        attempt = settled.attempt + 1;
      }
    }
    if (!this.#makeRoom(now)) return new PendingRejection(this.#full());
    return this.#lease(key, attempt, now, leaseMs);
  }

  /** Marks `key` done for `retentionMs` (or the store's retention), at once. */
  complete(key: string, token: string, retentionMs: number): void {
    const lease = this.#leases.get(key);
    if (lease?.token !== token) return;
    const keepFor = retentionMs > 0 ? retentionMs : this.#retentionMs;
    const now = this.#now();
    if (now - this.#base > REBASE_AFTER_MS) this.#rebase(now);
    this.#leases.delete(key);
    this.#settled.set(key, now - this.#base + keepFor);
  }

  /** Extends the lease of `token` on `key` to `leaseMs` from now, at once; false when the lease is lost. */
  renew(key: string, token: string, leaseMs: number): boolean {
    const lease = this.#leases.get(key);
    if (lease?.token !== token) return false;
    // Moved last with its new expiry, so the first lease stays the first to expire (see #makeRoom).
    this.#leases.delete(key);
    this.#leases.set(key, { token, attempt: lease.attempt, expiresAt: this.#now() + leaseMs });
    return true;
  }

  /** Drops the lease of `token` on `key`, at once, keeping its attempt count. */
  release(key: string, token: string): void {
    const lease = this.#leases.get(key);
    if (lease?.token !== token) return;
    this.#leases.delete(key);
    this.#settled.set(key, { attempt: lease.attempt, expiresAt: this.#now() + this.#retentionMs });
  }

  /** Counts completed keys' expiries from `now` (once in about 6 days; order kept: `set` on a held key). */
  #rebase(now: number): void {
    const shift = now - this.#base;
    for (const [key, settled] of this.#settled) {
      if (typeof settled === 'number') this.#settled.set(key, settled - shift);
    }
    this.#base = now;
  }

  #lease(key: string, attempt: number, now: number, leaseMs: number): IdempotencyClaim {
    // A counter, not a random UUID: nothing outside this process sees the token, and it is cheaper.
    const token = `${++this.#lastToken}`;
    this.#leases.set(key, { token, attempt, expiresAt: now + leaseMs });
    return { status: 'claimed', token, attempt };
  }

  /**
   * Frees one slot when the store is full: the least recently used settled key, else the oldest lease
   * if it has expired (its owner is gone). False when every key held is a live lease.
   */
  #makeRoom(now: number): boolean {
    if (this.#leases.size + this.#settled.size < this.#maxEntries) return true;
    if (this.#settled.size > 0) {
      this.#settled.delete(this.#settled.keys().next().value!);
      return true;
    }
    const oldest = this.#leases.entries().next().value;
    if (oldest !== undefined && oldest[1].expiresAt <= now) {
      this.#leases.delete(oldest[0]);
      return true;
    }
    return false;
  }

  #full(): PaymentsError {
    return new PaymentsError(
      `MemoryIdempotencyStore is full: all ${this.#maxEntries} entries are handlers running now (raise maxEntries, or use a shared store such as RedisIdempotencyStore)`,
    );
  }
}
