import type { PaymentsRuntime } from '../../core/payments.runtime.js';
import type { WatchedIntent } from '../contracts/intent-watch-store.interface.js';
import type { ResolvedPaymentsReconcileOptions } from '../contracts/payments-reconcile.options.js';
import type { KeptLease, ReconcileSweepResult } from './reconcile-sweep.js';
import type { RetrieveOutcome } from './watched-intent.retrieve.js';

/** Unanswered retrieves (network, timeout, 401/403) in a row after which a sweep stops until the next one. */
export const MAX_UNANSWERED_IN_A_ROW = 3;

/**
 * The pace of one instance's retrieves, kept across its sweeps: one started every `gapMs`
 * (`maxRetrievesPerSecond`) at most on average, never two closer than half of it, at most
 * `concurrency` in flight.
 */
export interface RetrievePacing {
  readonly gapMs: number;
  readonly concurrency: number;
  /** Earliest start of the next retrieve (ms, the runtime's clock). */
  nextStartAt: number;
}

/** Each instance's pace, by its resolved `webhooks.reconcile` (one object per instance). */
const PACINGS = new WeakMap<ResolvedPaymentsReconcileOptions, RetrievePacing>();

/**
 * The pace of the instance whose options are `options`: one object shared by its sweeps and by
 * current-state handling's retrieves (`WatchListSettlement.retrieveDelayMs`), so both stay inside one
 * `maxRetrievesPerSecond`.
 */
export function pacingOf(options: ResolvedPaymentsReconcileOptions): RetrievePacing {
  let pacing = PACINGS.get(options);
  if (pacing === undefined) {
    pacing = { gapMs: options.minRetrieveGapMs, concurrency: options.maxConcurrentRetrieves, nextStartAt: -Infinity };
    PACINGS.set(options, pacing);
  }
  return pacing;
}

/**
 * Reserves the next start on `pacing`'s grid for one retrieve outside a batch (current-state
 * handling): the ms to wait for it, 0 when it may start now.
 */
export function reserveRetrieve(pacing: RetrievePacing, now: number): number {
  const start = Math.max(now, pacing.nextStartAt);
  pacing.nextStartAt = start + pacing.gapMs;
  return start - now;
}

/**
 * New intents that became due while a batch runs: `peek` answers the list's first due intents
 * (never-checked first); those never checked and not in the batch are checked next, in place of the
 * batch's last ones (which stay due for the next batch).
 */
export interface FreshPeek {
  peek(): Promise<readonly WatchedIntent[]>;
  /** Starts between two peeks. */
  every: number;
}

/**
 * Checks one batch of due intents: each started on the pace, up to `concurrency` at once, the lease
 * confirmed before each start, at most `due.length` in all. Every `fresh.every` starts, intents due
 * for their first check since the batch was read go next, so a new intent waits a few starts, not a
 * whole batch of the backlog. A reason to stop (a 429, the store failing, the lease lost, or
 * `MAX_UNANSWERED_IN_A_ROW` unanswered answers in a row, in the order they came) starts no more; the
 * checks in flight end as they would have (each reschedules its own intent). Resolves once every
 * started check has ended: the next batch never overlaps this one, and an intent is in a batch once,
 * so one intent is never checked twice at once by this process.
 */
export async function retrieveBatch(
  due: readonly WatchedIntent[],
  pacing: RetrievePacing,
  runtime: Pick<PaymentsRuntime, 'now' | 'sleep'>,
  lease: Pick<KeptLease, 'held'>,
  check: (intent: WatchedIntent) => Promise<RetrieveOutcome>,
  fresh?: FreshPeek,
): Promise<ReconcileSweepResult['stopped']> {
  const queue = [...due];
  const inBatch = new Set(due.map((intent) => intent.id));
  let started = 0;
  const inFlight = new Set<Promise<void>>();
  let stopped: ReconcileSweepResult['stopped'];
  let unanswered = 0;
  const settle = (outcome: RetrieveOutcome): void => {
    unanswered = outcome === 'unanswered' ? unanswered + 1 : 0;
    // The service (or the network) is down, or rate-limits: each intent tried is rescheduled on its
    // own cadence; the rest wait for the next sweep rather than hammering it.
    const stop =
      outcome === 'unanswered' ? (unanswered >= MAX_UNANSWERED_IN_A_ROW ? 'unavailable' : undefined) : outcome;
    stopped ??= stop;
  };
  while (started < due.length && queue.length > 0) {
    if (fresh && started > 0 && started % fresh.every === 0) {
      // A failed peek changes nothing: the next batch reads the list again.
      const peeked = await fresh.peek().catch(() => []);
      const added = peeked.filter((intent) => intent.checks === 0 && !inBatch.has(intent.id));
      for (const intent of added) inBatch.add(intent.id);
      queue.unshift(...added);
    }
    const intent = queue.shift()!;
    while (inFlight.size >= pacing.concurrency && stopped === undefined) await Promise.race(inFlight);
    if (stopped !== undefined) break;
    const wait = pacing.nextStartAt - runtime.now();
    if (wait > 0) await runtime.sleep(wait);
    if (stopped !== undefined) break;
    // Another instance may sweep once this one's lease is gone: stop rather than check twice.
    if (!(await lease.held())) {
      stopped = 'lease_lost';
      break;
    }
    // On the grid of the rate: a timer that fired a little late does not slow every later start (the
    // rate holds on a loaded machine); after a pause the grid starts again from now (no burst).
    const now = runtime.now();
    pacing.nextStartAt = (now - pacing.nextStartAt <= pacing.gapMs / 2 ? pacing.nextStartAt : now) + pacing.gapMs;
    started++;
    const running: Promise<void> = check(intent)
      .then(settle)
      .finally(() => inFlight.delete(running));
    inFlight.add(running);
  }
  await Promise.all(inFlight);
  return stopped;
}
