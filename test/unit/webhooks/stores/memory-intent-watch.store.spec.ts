import { describe, expect, it } from '@jest/globals';
import { MemoryIdempotencyStore, PaymentsError, PaymentsInvalidArgumentError } from '../../../../lib/index.js';
import type { WatchedIntent } from '../../../../lib/webhooks/index.js';
import { MemoryIntentWatchStore } from '../../../../lib/webhooks/stores/memory-intent-watch.store.js';
import { itKeepsTheDueLanes } from '../../../fixtures/webhooks/intent-watch-lanes.contract.js';

/*
 * The in-memory watch list (issue 31, item 4): two heaps by next check (never-checked first), read in
 * due order without sorting the list, and bounded.
 */
describe('MemoryIntentWatchStore', () => {
  itKeepsTheDueLanes(() => new MemoryIntentWatchStore());

  it('answers as a full sort of the list would, through thousands of watches, reschedules and forgets', () => {
    // A seeded walk (xorshift) against the reference: filter, sort by (lane, next check, arrival), slice.
    let seed = 0x2f6b1;
    const next = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const list = new MemoryIntentWatchStore();
    const model = new Map<string, WatchedIntent & { seq: number }>();
    let seq = 0;
    for (let step = 0; step < 3_000; step++) {
      const op = next(10);
      const ids = [...model.keys()];
      if (op < 4 || ids.length === 0) {
        const intent: WatchedIntent = {
          kind: 'payment_intent',
          id: `intent-${step}`,
          createdAt: 0,
          nextCheckAt: next(1_000),
          checks: next(3) === 0 ? 1 : 0,
        };
        list.watch(intent);
        model.set(intent.id, { ...intent, seq: seq++ });
      } else if (op < 7) {
        const id = ids[next(ids.length)]!;
        const [at, checks] = [next(1_000), model.get(id)!.checks + 1];
        list.reschedule(id, at, checks);
        model.set(id, { ...model.get(id)!, nextCheckAt: at, checks });
      } else if (op < 8) {
        const id = ids[next(ids.length)]!;
        list.forget(id);
        model.delete(id);
      } else {
        const [now, limit] = [next(1_000), 1 + next(50)];
        const expected = [...model.values()]
          .filter((i) => i.nextCheckAt <= now)
          .sort((a, b) => Number(a.checks > 0) - Number(b.checks > 0) || a.nextCheckAt - b.nextCheckAt || a.seq - b.seq)
          .slice(0, limit)
          .map((i) => i.id);
        expect(list.due(now, limit).map((i) => i.id)).toEqual(expected);
      }
    }
    expect(list.size).toBe(model.size);
  });

  it('refuses an intent past maxIntents with an error naming the option; the watched ones stay, room comes back', () => {
    const list = new MemoryIntentWatchStore({ maxIntents: 2 });
    const watch = (id: string) => list.watch({ kind: 'payment_intent', id, createdAt: 0, nextCheckAt: 0, checks: 0 });
    watch('a');
    watch('b');
    watch('a'); // already watched: no room needed
    expect(() => watch('c')).toThrow(PaymentsError);
    expect(() => watch('c')).toThrow(/in-memory watch list is full \(2 intents; MemoryIntentWatchStore maxIntents\)/);
    expect(list.due(1, 10).map((i) => i.id)).toEqual(['a', 'b']);
    list.forget('a');
    watch('c');
    expect(list.size).toBe(2);
  });

  it('holds 100000 intents by default', () => {
    const list = new MemoryIntentWatchStore();
    for (let n = 0; n < 100_000; n++) {
      list.watch({ kind: 'payment_intent', id: `i${n}`, createdAt: 0, nextCheckAt: n, checks: 0 });
    }
    expect(() =>
      list.watch({ kind: 'payment_intent', id: 'one-more', createdAt: 0, nextCheckAt: 0, checks: 0 }),
    ).toThrow(/100000 intents/);
    expect(list.due(Number.MAX_SAFE_INTEGER, 3).map((i) => i.id)).toEqual(['i0', 'i1', 'i2']);
  });

  it("MemoryIdempotencyStore's maxWatchedIntents bounds its watch list, checked when the store is built (at boot)", () => {
    expect(() => new MemoryIdempotencyStore({ maxWatchedIntents: 0 })).toThrow(PaymentsInvalidArgumentError);
    expect(() => new MemoryIdempotencyStore({ maxWatchedIntents: 1.5 })).toThrow(/maxWatchedIntents/);
    const list = new MemoryIdempotencyStore({ maxWatchedIntents: 1 }).intentWatchStore();
    list.watch({ kind: 'payment_intent', id: 'a', createdAt: 0, nextCheckAt: 0, checks: 0 });
    expect(() => list.watch({ kind: 'payment_intent', id: 'b', createdAt: 0, nextCheckAt: 0, checks: 0 })).toThrow(
      /MemoryIdempotencyStore maxWatchedIntents/,
    );
  });
});
