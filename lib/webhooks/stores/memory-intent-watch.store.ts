import { resolveClock, type PaymentsClock } from '../../core/payments.clock.js';
import type { IntentWatchStore, WatchedIntent } from '../contracts/intent-watch-store.interface.js';

/**
 * The reconciler's watch list in this process: the companion of `MemoryIdempotencyStore` (one
 * instance, or tests). Answers at once. The lease is this process's clock.
 */
export class MemoryIntentWatchStore implements IntentWatchStore {
  readonly #intents = new Map<string, WatchedIntent>();
  readonly #now: () => number;
  #lease: { owner: string; until: number } | undefined;

  constructor(options: { now?: PaymentsClock } = {}) {
    this.#now = resolveClock(options.now);
  }

  watch(intent: WatchedIntent): void {
    if (!this.#intents.has(intent.id)) this.#intents.set(intent.id, { ...intent });
  }

  due(now: number, limit: number): WatchedIntent[] {
    return [...this.#intents.values()]
      .filter((intent) => intent.nextCheckAt <= now)
      .sort((a, b) => a.nextCheckAt - b.nextCheckAt)
      .slice(0, limit)
      .map((intent) => ({ ...intent }));
  }

  reschedule(id: string, nextCheckAt: number, checks: number): void {
    const intent = this.#intents.get(id);
    if (intent) this.#intents.set(id, { ...intent, nextCheckAt, checks });
  }

  forget(id: string): void {
    this.#intents.delete(id);
  }

  lease(owner: string, ms: number): boolean {
    const now = this.#now();
    if (this.#lease && this.#lease.owner !== owner && this.#lease.until > now) return false;
    this.#lease = { owner, until: now + ms };
    return true;
  }

  list(): WatchedIntent[] {
    return [...this.#intents.values()].map((intent) => ({ ...intent }));
  }
}
