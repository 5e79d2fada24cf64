import { resolveClock, type PaymentsClock } from '../../core/payments.clock.js';
import { PaymentsError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import type { IntentWatchStore, WatchedIntent } from '../contracts/intent-watch-store.interface.js';
import { IntentDueHeap, type DueEntry } from './intent-due.heap.js';

/** Most intents a `MemoryIntentWatchStore` watches unless told otherwise. */
export const DEFAULT_MAX_WATCHED_INTENTS = 100_000;

/** Options of `MemoryIntentWatchStore`. */
export interface MemoryIntentWatchStoreOptions {
  /** Clock in ms since the epoch (a `PaymentsRuntime` fits). Default `Date.now`. */
  now?: PaymentsClock;
  /**
   * Most intents watched at once (default 100000, about 25 MB): beyond it `watch` rejects with an error
   * naming this option, the create still succeeds and only that intent's webhook settles it.
   */
  maxIntents?: number;
  /** @internal Whose option `maxIntents` is, in errors (`MemoryIdempotencyStore` passes its own). */
  optionOf?: { where: string; argument: string };
}

/**
 * The reconciler's watch list in this process: the companion of `MemoryIdempotencyStore` (one
 * instance, or tests). Answers at once. The lease is this process's clock. Two heaps by next check:
 * intents never checked yet (read first, so a new intent's first check never waits behind a backlog
 * of old ones), and the rest; bounded by `maxIntents`.
 */
export class MemoryIntentWatchStore implements IntentWatchStore {
  readonly #intents = new Map<string, DueEntry>();
  readonly #fresh = new IntentDueHeap();
  readonly #checked = new IntentDueHeap();
  readonly #now: () => number;
  readonly #maxIntents: number;
  readonly #optionName: string;
  #seq = 0;
  #lease: { owner: string; until: number } | undefined;

  constructor(options: MemoryIntentWatchStoreOptions = {}) {
    this.#now = resolveClock(options.now);
    const { where, argument } = options.optionOf ?? { where: 'MemoryIntentWatchStore', argument: 'maxIntents' };
    this.#optionName = `${where} ${argument}`;
    const max = options.maxIntents ?? DEFAULT_MAX_WATCHED_INTENTS;
    if (!Number.isInteger(max) || max < 1) {
      throw new PaymentsInvalidArgumentError(
        where,
        argument,
        'must be a whole number >= 1 (most intents the in-memory watch list holds)',
      );
    }
    this.#maxIntents = max;
  }

  /** Intents watched now. */
  get size(): number {
    return this.#intents.size;
  }

  watch(intent: WatchedIntent): void {
    if (this.#intents.has(intent.id)) return;
    if (this.#intents.size >= this.#maxIntents) {
      throw new PaymentsError(
        `the in-memory watch list is full (${this.#maxIntents} intents; ${this.#optionName}): ${intent.id} is not watched, only its webhook settles it. Raise ${this.#optionName}, or keep the list in Redis or PostgreSQL`,
      );
    }
    const entry: DueEntry = { intent: { ...intent }, seq: this.#seq++, pos: -1 };
    this.#intents.set(intent.id, entry);
    this.#lane(entry).push(entry);
  }

  due(now: number, limit: number): WatchedIntent[] {
    const fresh = this.#fresh.due(now, limit);
    const rest = this.#checked.due(now, limit - fresh.length);
    return [...fresh, ...rest].map((entry) => ({ ...entry.intent }));
  }

  reschedule(id: string, nextCheckAt: number, checks: number): void {
    const entry = this.#intents.get(id);
    if (!entry) return;
    const from = this.#lane(entry);
    entry.intent = { ...entry.intent, nextCheckAt, checks };
    const to = this.#lane(entry);
    if (from === to) return to.update(entry);
    from.remove(entry);
    to.push(entry);
  }

  forget(id: string): void {
    const entry = this.#intents.get(id);
    if (!entry) return;
    this.#intents.delete(id);
    this.#lane(entry).remove(entry);
  }

  lease(owner: string, ms: number): boolean {
    const now = this.#now();
    if (this.#lease && this.#lease.owner !== owner && this.#lease.until > now) return false;
    this.#lease = { owner, until: now + ms };
    return true;
  }

  list(): WatchedIntent[] {
    return [...this.#intents.values()].map((entry) => ({ ...entry.intent }));
  }

  #lane(entry: DueEntry): IntentDueHeap {
    return entry.intent.checks === 0 ? this.#fresh : this.#checked;
  }
}
