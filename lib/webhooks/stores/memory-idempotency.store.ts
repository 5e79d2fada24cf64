import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import type { IdempotencyClaim, IdempotencyStore } from './idempotency-store.interface.js';

/** Options of `MemoryIdempotencyStore`. */
export interface MemoryIdempotencyStoreOptions {
  /**
   * Most (event, handler) keys kept; the least recently used goes first beyond it. Default 100000.
   * Size it above (events per retention period x handlers): an evicted "done" key runs again if the
   * service redelivers it.
   */
  maxEntries?: number;
  /**
   * How long, in seconds, a completed key is remembered when `complete` is given no positive
   * retention, and how long a released key keeps its attempt count. Default 259200 (3 days).
   */
  retentionSeconds?: number;
  /** Clock in ms since the epoch (a `PaymentsRuntime` fits). Default `Date.now`. */
  now?: (() => number) | { now(): number };
}

type Entry =
  | { state: 'leased'; token: string; attempt: number; expiresAt: number }
  | { state: 'released'; attempt: number; expiresAt: number }
  | { state: 'done'; attempt: number; expiresAt: number };

/**
 * The default `IdempotencyStore`: a bounded LRU map in this process. Right for one instance; with
 * several instances, use `RedisIdempotencyStore` so that they share claims. A restart forgets every
 * claim, which is safe for in-flight work (the service redelivers) but lets an already handled event
 * run again if it is redelivered after the restart.
 *
 * @example PaymentsModule.forRoot({ ..., webhooks: { verifier, store: new MemoryIdempotencyStore({ maxEntries: 50_000 }) } })
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries: LRUCache<string, Entry>;
  readonly #retentionMs: number;
  readonly #now: () => number;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    const retentionSeconds = options.retentionSeconds ?? 259_200;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new PaymentsConfigurationError('MemoryIdempotencyStore maxEntries', 'must be an integer >= 1', 'pass a whole number above (events per retention period x handlers), or omit it for 100000');
    }
    if (!Number.isFinite(retentionSeconds) || retentionSeconds <= 0) {
      throw new PaymentsConfigurationError('MemoryIdempotencyStore retentionSeconds', 'must be a number > 0', 'pass seconds (at least the service\'s retry window), or omit it for 259200 (3 days)');
    }
    this.#entries = new LRUCache<string, Entry>({ max: maxEntries });
    this.#retentionMs = retentionSeconds * 1000;
    const clock = options.now;
    this.#now = clock === undefined ? () => Date.now() : typeof clock === 'function' ? clock : () => clock.now();
  }

  /** Number of keys held (expired ones included until they are touched or evicted). */
  get size(): number {
    return this.#entries.size;
  }

  async claim(key: string, leaseMs: number): Promise<IdempotencyClaim> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry?.state === 'done') return { status: 'done' };
    if (entry?.state === 'leased' && entry.expiresAt > now) return { status: 'busy' };
    // Absent, released, or a lease that expired (its owner crashed or overran): claim it again.
    const attempt = (entry?.attempt ?? 0) + 1;
    const token = randomUUID();
    this.#entries.set(key, { state: 'leased', token, attempt, expiresAt: now + leaseMs });
    return { status: 'claimed', token, attempt };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<void> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry?.state !== 'leased' || entry.token !== token) return;
    const keepFor = retentionMs > 0 ? retentionMs : this.#retentionMs;
    this.#entries.set(key, { state: 'done', attempt: entry.attempt, expiresAt: now + keepFor });
  }

  async release(key: string, token: string): Promise<void> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry?.state !== 'leased' || entry.token !== token) return;
    this.#entries.set(key, { state: 'released', attempt: entry.attempt, expiresAt: now + this.#retentionMs });
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }

  /** The entry unless its retention ran out (an expired lease is kept: it carries the attempt count). */
  #live(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.state !== 'leased' && entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
