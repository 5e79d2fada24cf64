import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { WatchedIntent } from '../../../../lib/webhooks/index.js';
import { retrieveBatch, type RetrievePacing } from '../../../../lib/webhooks/reconcile/reconcile-batch.js';
import type { RetrieveOutcome } from '../../../../lib/webhooks/reconcile/watched-intent.retrieve.js';

/*
 * One batch of checks (issue 31, item 4): started at most maxRetrievesPerSecond, at most
 * maxConcurrentRetrieves in flight, the stop rules of the sequential sweep kept. On Jest's fake clock:
 * each retrieve takes simulated time.
 */
const intents = (count: number): WatchedIntent[] =>
  Array.from({ length: count }, (_, n) => ({
    kind: 'payment_intent',
    id: `intent-${n}`,
    createdAt: 0,
    nextCheckAt: 0,
    checks: 1,
  }));
const runtime = {
  now: () => Date.now(),
  sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
};
const held = { held: async () => true };

/** A check that answers `outcome(id)` after `ms(id)` of the fake clock, noting starts and the most in flight. */
function checker(ms: (id: string) => number, outcome: (id: string) => RetrieveOutcome = () => undefined) {
  const seen = { starts: [] as Array<{ id: string; at: number }>, ends: [] as string[], inFlight: 0, most: 0 };
  const check = async (intent: WatchedIntent): Promise<RetrieveOutcome> => {
    seen.starts.push({ id: intent.id, at: Date.now() });
    seen.most = Math.max(seen.most, ++seen.inFlight);
    await new Promise((resolve) => setTimeout(resolve, ms(intent.id)));
    seen.inFlight--;
    seen.ends.push(intent.id);
    return outcome(intent.id);
  };
  return { seen, check };
}

async function run<T>(work: Promise<T>, ms = 600_000): Promise<T> {
  let done = false;
  void work.finally(() => (done = true));
  for (let t = 0; t < ms && !done; t += 50) await jest.advanceTimersByTimeAsync(50);
  return work;
}

describe('retrieveBatch', () => {
  const start = Date.parse('2026-11-26T00:00:00Z');
  beforeEach(() => {
    jest.useFakeTimers({ now: start, doNotFake: ['nextTick', 'queueMicrotask'] });
  });
  afterEach(() => {
    jest.useRealTimers();
  });
  const pacing = (perSecond: number, concurrency: number): RetrievePacing => ({
    gapMs: 1000 / perSecond,
    concurrency,
    nextStartAt: Number.NEGATIVE_INFINITY,
  });

  it('keeps the rate with slow answers: 20 retrieves of 900 ms at 5/s take 4.7 s, not 18 s one at a time', async () => {
    const { seen, check } = checker(() => 900);
    expect(await run(retrieveBatch(intents(20), pacing(5, 5), runtime, held, check))).toBeUndefined();
    expect(seen.ends).toHaveLength(20);
    expect(Date.now() - start).toBeLessThanOrEqual(19 * 200 + 900 + 50);
    const gaps = seen.starts.slice(1).map((s, i) => s.at - seen.starts[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(200); // never faster than maxRetrievesPerSecond
    expect(seen.most).toBe(5);

    jest.setSystemTime(start);
    const one = checker(() => 900);
    await run(retrieveBatch(intents(20), pacing(5, 1), runtime, held, one.check));
    expect(one.seen.most).toBe(1);
    expect(Date.now() - start).toBeGreaterThanOrEqual(20 * 900);
  });

  it('never has more than maxConcurrentRetrieves in flight when answers are slower than the rate', async () => {
    const { seen, check } = checker(() => 3_000);
    await run(retrieveBatch(intents(9), pacing(10, 3), runtime, held, check));
    expect(seen.most).toBe(3);
    expect(seen.starts.map((s) => s.at - start)).toEqual([0, 100, 200, 3000, 3100, 3200, 6000, 6100, 6200]);
  });

  it('holds the rate when timers fire late (a loaded machine): starts stay on the grid, never closer than half a gap', async () => {
    const late = { now: runtime.now, sleep: (ms: number) => runtime.sleep(ms + 30) };
    const { seen, check } = checker(() => 10);
    await run(retrieveBatch(intents(21), pacing(5, 5), late, held, check));
    const at = seen.starts.map((s) => s.at - start);
    expect(at[20]).toBeLessThanOrEqual(20 * 200 + 30); // not 20 x 230
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
  });

  it("checks an intent that became due for its first check mid-batch next, in place of the batch's last one", async () => {
    const batch = intents(6);
    const newcomer: WatchedIntent = { kind: 'payment_intent', id: 'new', createdAt: 0, nextCheckAt: 0, checks: 0 };
    const peeks: number[] = [];
    const fresh = {
      every: 2,
      // The list's first due intents: the newcomer (once), one already in the batch, one checked before.
      peek: async () => {
        peeks.push(Date.now() - start);
        return peeks.length === 1 ? [newcomer, batch[4]!, { ...batch[5]!, id: 'old', checks: 2 }] : [];
      },
    };
    const { seen, check } = checker(() => 10);
    await run(retrieveBatch(batch, pacing(10, 2), runtime, held, check, fresh));
    expect(seen.starts.map((s) => s.id)).toEqual(['intent-0', 'intent-1', 'new', 'intent-2', 'intent-3', 'intent-4']);
    expect(peeks).toHaveLength(2); // after 2 and 4 starts
  });

  it('a peek that fails changes nothing', async () => {
    const { seen, check } = checker(() => 10);
    const fresh = { every: 1, peek: () => Promise.reject(new Error('store down')) };
    expect(await run(retrieveBatch(intents(3), pacing(10, 2), runtime, held, check, fresh))).toBeUndefined();
    expect(seen.starts.map((s) => s.id)).toEqual(['intent-0', 'intent-1', 'intent-2']);
  });

  it('carries the pace over to the next batch: its first retrieve waits out the gap', async () => {
    const shared = pacing(2, 4);
    const { seen, check } = checker(() => 10);
    await run(retrieveBatch(intents(1), shared, runtime, held, check));
    await run(retrieveBatch(intents(1), shared, runtime, held, check));
    expect(seen.starts.map((s) => s.at - start)).toEqual([0, 500]);
  });

  it('a 429 starts no more retrieves; the ones in flight end (each reschedules its own intent)', async () => {
    const { seen, check } = checker(
      (id) => (id === 'intent-1' ? 50 : 1_000),
      (id) => (id === 'intent-1' ? 'rate_limited' : undefined),
    );
    expect(await run(retrieveBatch(intents(10), pacing(10, 4), runtime, held, check))).toBe('rate_limited');
    // intent-1 answered 429 at 150 ms: intent-0 and intent-1 were in flight; intent-2 was not started yet.
    expect(seen.starts.map((s) => s.id)).toEqual(['intent-0', 'intent-1']);
    expect(seen.ends.sort()).toEqual(['intent-0', 'intent-1']);
  });

  it('stops after three unanswered answers in a row, in the order they come; an answer between resets the count', async () => {
    const answered = new Set(['intent-2']);
    const { seen, check } = checker(
      () => 250,
      (id) => (answered.has(id) ? undefined : 'unanswered'),
    );
    expect(await run(retrieveBatch(intents(12), pacing(10, 2), runtime, held, check))).toBe('unavailable');
    // Ends in order 0, 1, 2 (answered: reset), 3, 4, 5: the third unanswered in a row stops the batch.
    expect(seen.ends.slice(0, 6)).toEqual(['intent-0', 'intent-1', 'intent-2', 'intent-3', 'intent-4', 'intent-5']);
    expect(seen.starts.length).toBeLessThan(12);
    expect(seen.inFlight).toBe(0);
  });

  it('stops starting once the lease is lost', async () => {
    let left = 3;
    const lease = { held: async () => left-- > 0 };
    const { seen, check } = checker(() => 10);
    expect(await run(retrieveBatch(intents(10), pacing(10, 4), runtime, lease, check))).toBe('lease_lost');
    expect(seen.starts).toHaveLength(3);
  });
});
