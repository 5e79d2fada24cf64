import { beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryIdempotencyStore, PaymentsInvalidArgumentError, type IdempotencyClaim } from '../../../../lib/index.js';
import { describeIdempotencyStore } from '../../../../lib/testing/index.js';

const LEASE = 30_000;
const RETENTION = 60_000;
const SLOT = 'succeeded|Handler.method';
const EVENT = '0b9d2a1c-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
const run = (leaseMs: number) => ({ slot: SLOT, eventId: EVENT, leaseMs });
const done = (token: string, retentionMs: number) => ({ slot: SLOT, token, eventId: EVENT, retentionMs });

// The contract every store keeps (claim races, tokens, expiry, release, retention, renewal), on an
// injected clock: the suite's waits advance it, so it runs instantly and exactly.
let contractNow = 1_700_000_000_000;
describeIdempotencyStore('MemoryIdempotencyStore', () => new MemoryIdempotencyStore({ now: () => contractNow }), {
  elapse: (ms) => {
    contractNow += ms;
  },
  // close() forgets every key: the claim is gone behind the owner's back.
  forget: (store) => store.close(),
  teardown: (store) => store.close(),
});

describe('MemoryIdempotencyStore', () => {
  let now: number;
  let store: MemoryIdempotencyStore;
  beforeEach(() => {
    now = 1_700_000_000_000;
    store = new MemoryIdempotencyStore({ now: () => now });
  });

  const claimed = async (key: string) => {
    const claim = await store.claim(key, run(LEASE));
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    return claim;
  };

  it('answers busy to a second claim up to the last millisecond of the lease', async () => {
    await claimed('e1:h');
    now += LEASE - 1;
    expect(await store.claim('e1:h', run(LEASE))).toEqual({ status: 'busy' });
  });

  it('forgets a completed key exactly at the end of its retention', async () => {
    const { token } = await claimed('e1:h');
    await store.complete('e1:h', done(token, RETENTION));
    now += RETENTION - 1;
    expect(await store.claim('e2:h', run(LEASE))).toMatchObject({ status: 'claimed' });
    expect(await store.claim('e1:h', run(LEASE))).toEqual({ status: 'done' });
    now += 1;
    expect(await store.claim('e1:h', run(LEASE))).toMatchObject({ status: 'claimed', attempt: 1 });
  });

  it('remembers completed keys for 3 days by default when complete gets no retention', async () => {
    const { token } = await claimed('e1:h');
    await store.complete('e1:h', done(token, 0));
    now += 3 * 24 * 3600 * 1000 - 1;
    expect(await store.claim('e1:h', run(LEASE))).toEqual({ status: 'done' });
  });

  it('keeps every expiry exact over weeks of uptime (expiries counted again from a later time)', async () => {
    const DAY = 24 * 3600 * 1000;
    const { token: early } = await claimed('early:h');
    await store.complete('early:h', done(early, 10 * DAY));
    // 7 days on, the next completion counts expiries from then: the earlier key keeps its own.
    now += 7 * DAY;
    const { token: late } = await claimed('late:h');
    await store.complete('late:h', done(late, DAY));
    now += 3 * DAY - 1;
    expect(await store.claim('early:h', run(LEASE))).toEqual({ status: 'done' });
    now += 1;
    expect(await store.claim('early:h', run(LEASE))).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(await store.claim('late:h', run(LEASE))).toMatchObject({ status: 'claimed', attempt: 1 });
    // And again 20 days on, past a second recount.
    const { token: later } = await claimed('later:h');
    now += 20 * DAY;
    const { token: renewed } = await claimed('renewed:h');
    await store.complete('later:h', done(later, 1000));
    await store.complete('renewed:h', done(renewed, 1000));
    now += 999;
    expect(await store.claim('later:h', run(LEASE))).toEqual({ status: 'done' });
    expect(await store.claim('renewed:h', run(LEASE))).toEqual({ status: 'done' });
    now += 1;
    expect(await store.claim('later:h', run(LEASE))).toMatchObject({ status: 'claimed' });
  });

  it('is bounded: beyond maxEntries the least recently used key is forgotten', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 3, now: () => now });
    for (const key of ['a', 'b', 'c']) {
      const claim = await small.claim(key, run(LEASE));
      if (claim.status === 'claimed') await small.complete(key, done(claim.token, RETENTION));
    }
    expect(await small.claim('a', run(LEASE))).toEqual({ status: 'done' }); // touch 'a': 'b' is now the oldest
    await small.claim('d', run(LEASE));
    expect(small.size).toBe(3);
    expect(await small.claim('b', run(LEASE))).toMatchObject({ status: 'claimed' });
    expect(await small.claim('a', run(LEASE))).toEqual({ status: 'done' });
  });

  it('never evicts a live lease: more than maxEntries other events during a handler do not let a copy run', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 3, now: () => now });
    const running = await small.claim('slow:h', run(LEASE));
    expect(running).toMatchObject({ status: 'claimed' });
    for (let i = 0; i < 10; i += 1) {
      const claim = await small.claim(`other-${i}:h`, run(LEASE));
      if (claim.status === 'claimed') await small.complete(`other-${i}:h`, done(claim.token, RETENTION));
    }
    expect(await small.claim('slow:h', run(LEASE))).toEqual({ status: 'busy' });
    expect(small.size).toBeLessThanOrEqual(3);
  });

  it('refuses a new claim (the receiver answers 503) when every entry is a live lease, and takes it once one settles', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 2, now: () => now });
    const first = await small.claim('a:h', run(LEASE));
    await small.claim('b:h', run(LEASE));
    await expect(small.claim('c:h', run(LEASE))).rejects.toThrow(/full.*maxEntries/);
    expect(await small.claim('a:h', run(LEASE))).toEqual({ status: 'busy' });
    expect(await small.claim('b:h', run(LEASE))).toEqual({ status: 'busy' });
    if (first.status !== 'claimed') throw new Error('expected a claim');
    await small.complete('a:h', done(first.token, RETENTION));
    expect(await small.claim('c:h', run(LEASE))).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(await small.claim('b:h', run(LEASE))).toEqual({ status: 'busy' });
  });

  it('makes room by dropping an expired lease (its owner is gone) before refusing', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 1, now: () => now });
    await small.claim('crashed:h', run(LEASE));
    now += LEASE;
    expect(await small.claim('next:h', run(LEASE))).toMatchObject({ status: 'claimed' });
  });

  it('evicts completed keys oldest first while leases stay', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 3, now: () => now });
    await small.claim('live:h', run(LEASE));
    for (const key of ['old:h', 'new:h']) {
      const claim = await small.claim(key, run(LEASE));
      if (claim.status === 'claimed') await small.complete(key, done(claim.token, RETENTION));
    }
    await small.claim('next:h', run(LEASE));
    expect(await small.claim('new:h', run(LEASE))).toEqual({ status: 'done' });
    expect(await small.claim('live:h', run(LEASE))).toEqual({ status: 'busy' });
    expect(await small.claim('next:h', run(LEASE))).toEqual({ status: 'busy' });
  });

  it('accepts a PaymentsRuntime-like clock object', async () => {
    let t = 0;
    const withRuntime = new MemoryIdempotencyStore({ now: { now: () => t } });
    await withRuntime.claim('k', run(10));
    t = 10;
    expect(await withRuntime.claim('k', run(10))).toMatchObject({ status: 'claimed', attempt: 2 });
  });

  it('a renewed lease moves last, so an expired lease claimed after it still makes room', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 2, now: () => now });
    const first = await small.claim('first:h', run(LEASE));
    await small.claim('crashed:h', run(LEASE));
    if (first.status !== 'claimed') throw new Error('expected a claim');
    now += LEASE / 2;
    expect(await small.renew('first:h', { slot: SLOT, token: first.token, leaseMs: LEASE })).toBe(true);
    now += LEASE / 2; // 'crashed:h' has expired, 'first:h' runs on its renewed lease
    expect(await small.claim('next:h', run(LEASE))).toMatchObject({ status: 'claimed' });
    expect(await small.claim('first:h', run(LEASE))).toEqual({ status: 'busy' });
  });

  it('renew answers at once, as claim does (no promise)', () => {
    const claim = store.claim('e1:h', run(LEASE)) as IdempotencyClaim;
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    expect(store.renew('e1:h', { slot: SLOT, token: claim.token, leaseMs: LEASE })).toBe(true);
    expect(store.renew('e1:h', { slot: SLOT, token: 'someone-else', leaseMs: LEASE })).toBe(false);
  });

  it('forgets everything on close', async () => {
    const { token } = await claimed('e1:h');
    await store.complete('e1:h', done(token, RETENTION));
    await store.close();
    expect(store.size).toBe(0);
  });

  it('rejects a nonsensical size or retention with PaymentsInvalidArgumentError naming the argument', () => {
    expect(() => new MemoryIdempotencyStore({ maxEntries: 0 })).toThrow(
      /^MemoryIdempotencyStore: `maxEntries` must be an integer >= 1/,
    );
    expect(() => new MemoryIdempotencyStore({ retentionSeconds: -1 })).toThrow(PaymentsInvalidArgumentError);
    expect(() => new MemoryIdempotencyStore({ retentionSeconds: -1 })).toThrow(/`retentionSeconds`/);
  });
});
