import { resolveClock, type PaymentsClock } from '../../core/payments.clock.js';
import { PaymentsError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import type { IntentWatchStore, WatchedIntent } from '../contracts/intent-watch-store.interface.js';
import { IntentDueHeap, type DueEntry } from './intent-due.heap.js';

/** Most intents a `MemoryIntentWatchStore` watches unless told otherwise. */
export const DEFAULT_MAX_WATCHED_INTENTS = 100_000;

/** One watched intent: its place in its list's heap, and the list (so a record can end its watch). */
export interface WatchEntry extends DueEntry {
  readonly list: MemoryIntentWatchStore;
}

/**
 * Where a `MemoryIntentWatchStore` keeps its entries by intent id: a map of its own (the default), or
 * the records of the `MemoryIdempotencyStore` it belongs to. `set` may throw (full).
 */
export interface WatchEntries {
  get(id: string): WatchEntry | undefined;
  set(id: string, entry: WatchEntry): void;
  delete(id: string): void;
}

/** Options of `MemoryIntentWatchStore`. */
export interface MemoryIntentWatchStoreOptions {
  /** Clock in ms since the epoch (a `PaymentsRuntime` fits). Default `Date.now`. */
  now?: PaymentsClock;
  /**
   * Most intents watched at once (default 100000, about 25 MB): beyond it `watch` rejects with an error
   * naming this option, the create still succeeds and only that intent's webhook settles it.
   */
  maxIntents?: number;
  /** @internal Where the entries live (`MemoryIdempotencyStore` keeps them in its records). */
  entries?: WatchEntries;
}

/** The default `WatchEntries`: a map, bounded by `maxIntents`. */
function mapEntries(max: number): WatchEntries {
  const map = new Map<string, WatchEntry>();
  return {
    get: (id) => map.get(id),
    set: (id, entry) => {
      if (map.size >= max) {
        throw new PaymentsError(
          `the in-memory watch list is full (${max} intents; MemoryIntentWatchStore maxIntents): ${id} is not watched, only its webhook settles it. Raise MemoryIntentWatchStore maxIntents, or keep the list in Redis or PostgreSQL`,
        );
      }
      map.set(id, entry);
    },
    delete: (id) => void map.delete(id),
  };
}

/**
 * The reconciler's watch list in this process: one instance, or tests (the list of a
 * `MemoryIdempotencyStore` is one of these, kept in its records). Answers at once. The lease is this
 * process's clock. Two heaps by next check: intents never checked yet (read first, so a new intent's
 * first check never waits behind a backlog of old ones), and the rest.
 */
export class MemoryIntentWatchStore implements IntentWatchStore {
  /** True for the list of a `MemoryIdempotencyStore`, kept in its records. */
  readonly inRecords: boolean;
  readonly #entries: WatchEntries;
  readonly #fresh = new IntentDueHeap<WatchEntry>();
  readonly #checked = new IntentDueHeap<WatchEntry>();
  readonly #now: () => number;
  #seq = 0;
  #lease: { owner: string; until: number } | undefined;

  constructor(options: MemoryIntentWatchStoreOptions = {}) {
    this.#now = resolveClock(options.now);
    const max = options.maxIntents ?? DEFAULT_MAX_WATCHED_INTENTS;
    if (!Number.isInteger(max) || max < 1) {
      throw new PaymentsInvalidArgumentError(
        'MemoryIntentWatchStore',
        'maxIntents',
        'must be a whole number >= 1 (most intents the in-memory watch list holds)',
      );
    }
    this.#entries = options.entries ?? mapEntries(max);
    this.inRecords = options.entries !== undefined;
  }

  /** Intents watched now. */
  get size(): number {
    return this.#fresh.size + this.#checked.size;
  }

  watch(intent: WatchedIntent): void {
    if (this.#entries.get(intent.id) !== undefined) return;
    const entry: WatchEntry = { intent: { ...intent }, seq: this.#seq++, pos: -1, list: this };
    this.#entries.set(intent.id, entry);
    this.#lane(entry).push(entry);
  }

  due(now: number, limit: number): WatchedIntent[] {
    const fresh = this.#fresh.due(now, limit);
    const rest = this.#checked.due(now, limit - fresh.length);
    return [...fresh, ...rest].map((entry) => ({ ...entry.intent }));
  }

  reschedule(id: string, nextCheckAt: number, checks: number): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    const from = this.#lane(entry);
    entry.intent = { ...entry.intent, nextCheckAt, checks };
    const to = this.#lane(entry);
    if (from === to) return to.update(entry);
    from.remove(entry);
    to.push(entry);
  }

  forget(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#lane(entry).remove(entry);
    this.#entries.delete(id);
  }

  lease(owner: string, ms: number): boolean {
    const now = this.#now();
    if (this.#lease && this.#lease.owner !== owner && this.#lease.until > now) return false;
    this.#lease = { owner, until: now + ms };
    return true;
  }

  list(): WatchedIntent[] {
    return [
      ...this.#fresh.due(Number.POSITIVE_INFINITY, this.size),
      ...this.#checked.due(Number.POSITIVE_INFINITY, this.size),
    ].map((entry) => ({ ...entry.intent }));
  }

  #lane(entry: DueEntry): IntentDueHeap<WatchEntry> {
    return entry.intent.checks === 0 ? this.#fresh : this.#checked;
  }
}
