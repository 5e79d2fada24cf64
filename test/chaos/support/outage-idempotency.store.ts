import type { IdempotencyClaim, IdempotencyStore } from '../../../lib/index.js';
import type { RunClaimRequest, RunCompletion, RunRelease } from '../../../lib/webhooks/index.js';
import { leakAudit } from './leak-audit.js';
import type { SeededRandom } from './seeded-random.js';

/** How often and how long the store goes down, in store calls (deterministic, no clock). */
export interface OutagePlan {
  /** Chance, at each call while up, that an outage starts. */
  startChance: number;
  /** Calls refused by one outage, at least / at most. */
  minCalls: number;
  maxCalls: number;
}

/**
 * Wraps a real store (memory or Redis) and makes it fail for short windows, as an unreachable Redis
 * would: every call in a window rejects. Windows start at random (seeded) and last a drawn number of
 * calls, so they end by themselves once deliveries are retried. It records which keys lost a
 * `complete` (the handler ran but its completion was not stored), the one case where the design lets
 * a handler run again after its lease expires.
 */
export class OutageIdempotencyStore implements IdempotencyStore {
  outages = 0;
  readonly refused = { claim: 0, complete: 0, release: 0 };
  /** Per run (`<event id or intent record key> <slot>`): how many of its completions were refused. */
  readonly lostCompletions = new Map<string, number>();
  #remaining = 0;
  #enabled = true;

  constructor(
    private readonly inner: IdempotencyStore,
    private readonly random: SeededRandom,
    private readonly plan: OutagePlan = { startChance: 0.002, minCalls: 3, maxCalls: 25 },
  ) {}

  /** Total calls refused. */
  get refusedCalls(): number {
    return this.refused.claim + this.refused.complete + this.refused.release;
  }

  /** Stops starting new outages (the current one, if any, still runs out). */
  stopOutages(): void {
    this.#enabled = false;
  }

  async claim(key: string, request: RunClaimRequest): Promise<IdempotencyClaim> {
    this.#gate('claim', key, request.slot);
    return this.inner.claim(key, request);
  }

  async complete(key: string, completion: RunCompletion): Promise<void> {
    this.#gate('complete', key, completion.slot);
    return this.inner.complete(key, completion);
  }

  async release(key: string, release: RunRelease): Promise<void> {
    this.#gate('release', key, release.slot);
    return this.inner.release(key, release);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }

  #gate(method: 'claim' | 'complete' | 'release', key: string, slot: string): void {
    if (this.#remaining === 0 && this.#enabled && this.random.chance(this.plan.startChance)) {
      this.#remaining = this.random.int(this.plan.minCalls, this.plan.maxCalls);
      this.outages += 1;
    }
    if (this.#remaining === 0) return;
    this.#remaining -= 1;
    this.refused[method] += 1;
    const run = `${key} ${slot}`;
    if (method === 'complete') this.lostCompletions.set(run, (this.lostCompletions.get(run) ?? 0) + 1);
    const error = new Error('connect ECONNREFUSED 127.0.0.1:6390 (injected store outage)');
    leakAudit.scanError(error, 'injected store outage');
    throw error;
  }
}
