import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { MemoryIdempotencyStore } from '../../../../lib/index.js';
import type { RunCompletion, RunRelease } from '../../../../lib/webhooks/index.js';

const run = { slot: 'succeeded|H.paid', eventId: '5d1c0f8e-2a3b-4c5d-8e6f-7a8b9c0d1e2f', leaseMs: 60_000 };
import { retryCompleteLater, retryReleaseLater } from '../../../../lib/webhooks/dispatch/claim-release.retry.js';

/*
 * A release that failed (the store was unreachable) is retried in the background, so the redelivery
 * is not answered 409 until the lease ends (claimTtlSeconds). Fake timers: the delays are the code's,
 * not the machine's.
 */
describe('retryReleaseLater', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  /** A real memory store whose release fails while `down` is true. */
  function flakyStore(): { store: MemoryIdempotencyStore; calls: () => number; setDown(down: boolean): void } {
    const store = new MemoryIdempotencyStore();
    const release = store.release.bind(store);
    let down = true;
    let calls = 0;
    store.release = async (key: string, request: RunRelease) => {
      calls++;
      if (down) throw new Error('connect ECONNREFUSED');
      return release(key, request);
    };
    return { store, calls: () => calls, setDown: (value) => (down = value) };
  }

  it('releases the claim once the store is back, so a redelivery can claim it at once', async () => {
    const { store, calls, setDown } = flakyStore();
    const claim = await store.claim('evt_1:H.paid', run);
    expect(claim.status).toBe('claimed');
    const token = (claim as { token: string }).token;
    retryReleaseLater(store, 'evt_1:H.paid', { slot: run.slot, token }, [10, 20, 40]);

    await jest.advanceTimersByTimeAsync(10);
    expect(calls()).toBe(1); // still down
    expect((await store.claim('evt_1:H.paid', run)).status).toBe('busy');
    setDown(false);
    await jest.advanceTimersByTimeAsync(20);
    expect(calls()).toBe(2);
    expect((await store.claim('evt_1:H.paid', run)).status).toBe('claimed');
    await jest.advanceTimersByTimeAsync(1000);
    expect(calls()).toBe(2); // done: no more tries
  });

  it('completes a committed claim once the store is back: the redelivery is then a duplicate, not a 409', async () => {
    const store = new MemoryIdempotencyStore();
    const complete = store.complete.bind(store);
    let down = true;
    store.complete = async (key: string, completion: RunCompletion) => {
      if (down) throw new Error('connect ECONNREFUSED');
      return complete(key, completion);
    };
    const claim = (await store.claim('evt_3:H.paid', run)) as { token: string };
    retryCompleteLater(
      store,
      'evt_3:H.paid',
      { slot: run.slot, token: claim.token, eventId: run.eventId, retentionMs: 60_000 },
      [10, 20],
    );
    await jest.advanceTimersByTimeAsync(10);
    expect((await store.claim('evt_3:H.paid', run)).status).toBe('busy');
    down = false;
    await jest.advanceTimersByTimeAsync(20);
    expect((await store.claim('evt_3:H.paid', run)).status).toBe('done');
  });

  it('gives up after the last delay (the lease still ends) and never frees a claim another owner took', async () => {
    const { store, calls, setDown } = flakyStore();
    await store.claim('evt_2:H.paid', run);
    retryReleaseLater(store, 'evt_2:H.paid', { slot: run.slot, token: 'not-the-owner' }, [10, 20]);
    await jest.advanceTimersByTimeAsync(10);
    setDown(false);
    await jest.advanceTimersByTimeAsync(20);
    expect(calls()).toBe(2);
    expect((await store.claim('evt_2:H.paid', run)).status).toBe('busy'); // owner-only: still held
    await jest.advanceTimersByTimeAsync(10_000);
    expect(calls()).toBe(2);
  });
});
