import { beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryIdempotencyStore, PaymentsInvalidArgumentError } from '../../../../lib/index.js';

const LEASE = 30_000;
const RETENTION = 60_000;

describe('MemoryIdempotencyStore', () => {
  let now: number;
  let store: MemoryIdempotencyStore;
  beforeEach(() => {
    now = 1_700_000_000_000;
    store = new MemoryIdempotencyStore({ now: () => now });
  });

  const claimed = async (key: string) => {
    const claim = await store.claim(key, LEASE);
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    return claim;
  };

  it('grants the first claim of a key, with attempt 1', async () => {
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'claimed', token: expect.any(String), attempt: 1 });
  });

  it('answers busy to a second claim while the lease runs', async () => {
    await claimed('e1:h');
    now += LEASE - 1;
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'busy' });
  });

  it('answers done once the owner completed the key', async () => {
    const { token } = await claimed('e1:h');
    await store.complete('e1:h', token, RETENTION);
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'done' });
  });

  it('lets a redelivery claim a released key again, counting the attempt', async () => {
    const first = await claimed('e1:h');
    await store.release('e1:h', first.token);
    const second = await claimed('e1:h');
    expect(second.attempt).toBe(2);
    expect(second.token).not.toBe(first.token);
  });

  it('lets an expired lease be claimed again (its owner crashed), counting the attempt', async () => {
    await claimed('e1:h');
    now += LEASE;
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'claimed', token: expect.any(String), attempt: 2 });
  });

  it('ignores complete and release from a token that does not own the key', async () => {
    const owner = await claimed('e1:h');
    await store.complete('e1:h', 'someone-else', RETENTION);
    await store.release('e1:h', 'someone-else');
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'busy' });
    await store.complete('e1:h', owner.token, RETENTION);
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'done' });
  });

  it('ignores a late complete from an owner whose lease expired and was re-claimed', async () => {
    const stale = await claimed('e1:h');
    now += LEASE;
    const fresh = await claimed('e1:h');
    await store.complete('e1:h', stale.token, RETENTION);
    now += 1;
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'busy' });
    await store.release('e1:h', fresh.token);
    expect((await claimed('e1:h')).attempt).toBe(3);
  });

  it('lets an owner whose lease lapsed unclaimed still complete', async () => {
    const owner = await claimed('e1:h');
    now += LEASE + 5;
    await store.complete('e1:h', owner.token, RETENTION);
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'done' });
  });

  it('forgets a completed key after its retention', async () => {
    const { token } = await claimed('e1:h');
    await store.complete('e1:h', token, RETENTION);
    now += RETENTION - 1;
    expect(await store.claim('e2:h', LEASE)).toMatchObject({ status: 'claimed' });
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'done' });
    now += 1;
    expect(await store.claim('e1:h', LEASE)).toMatchObject({ status: 'claimed', attempt: 1 });
  });

  it('remembers completed keys for 3 days by default when complete gets no retention', async () => {
    const { token } = await claimed('e1:h');
    await store.complete('e1:h', token, 0);
    now += 3 * 24 * 3600 * 1000 - 1;
    expect(await store.claim('e1:h', LEASE)).toEqual({ status: 'done' });
  });

  it('keeps keys apart: one (event, handler) pair does not affect another', async () => {
    const { token } = await claimed('e1:a');
    await store.complete('e1:a', token, RETENTION);
    expect(await store.claim('e1:b', LEASE)).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(await store.claim('e2:a', LEASE)).toMatchObject({ status: 'claimed', attempt: 1 });
  });

  it('is bounded: beyond maxEntries the least recently used key is forgotten', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 3, now: () => now });
    for (const key of ['a', 'b', 'c']) {
      const claim = await small.claim(key, LEASE);
      if (claim.status === 'claimed') await small.complete(key, claim.token, RETENTION);
    }
    expect(await small.claim('a', LEASE)).toEqual({ status: 'done' }); // touch 'a': 'b' is now the oldest
    await small.claim('d', LEASE);
    expect(small.size).toBe(3);
    expect(await small.claim('b', LEASE)).toMatchObject({ status: 'claimed' });
    expect(await small.claim('a', LEASE)).toEqual({ status: 'done' });
  });

  it('never evicts a live lease: more than maxEntries other events during a handler do not let a copy run', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 3, now: () => now });
    const running = await small.claim('slow:h', LEASE);
    expect(running).toMatchObject({ status: 'claimed' });
    for (let i = 0; i < 10; i += 1) {
      const claim = await small.claim(`other-${i}:h`, LEASE);
      if (claim.status === 'claimed') await small.complete(`other-${i}:h`, claim.token, RETENTION);
    }
    expect(await small.claim('slow:h', LEASE)).toEqual({ status: 'busy' });
    expect(small.size).toBeLessThanOrEqual(3);
  });

  it('refuses a new claim (the receiver answers 503) when every entry is a live lease, and takes it once one settles', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 2, now: () => now });
    const first = await small.claim('a:h', LEASE);
    await small.claim('b:h', LEASE);
    await expect(small.claim('c:h', LEASE)).rejects.toThrow(/full.*maxEntries/);
    expect(await small.claim('a:h', LEASE)).toEqual({ status: 'busy' });
    expect(await small.claim('b:h', LEASE)).toEqual({ status: 'busy' });
    if (first.status !== 'claimed') throw new Error('expected a claim');
    await small.complete('a:h', first.token, RETENTION);
    expect(await small.claim('c:h', LEASE)).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(await small.claim('b:h', LEASE)).toEqual({ status: 'busy' });
  });

  it('makes room by dropping an expired lease (its owner is gone) before refusing', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 1, now: () => now });
    await small.claim('crashed:h', LEASE);
    now += LEASE;
    expect(await small.claim('next:h', LEASE)).toMatchObject({ status: 'claimed' });
  });

  it('evicts completed keys oldest first while leases stay', async () => {
    const small = new MemoryIdempotencyStore({ maxEntries: 3, now: () => now });
    await small.claim('live:h', LEASE);
    for (const key of ['old:h', 'new:h']) {
      const claim = await small.claim(key, LEASE);
      if (claim.status === 'claimed') await small.complete(key, claim.token, RETENTION);
    }
    await small.claim('next:h', LEASE);
    expect(await small.claim('new:h', LEASE)).toEqual({ status: 'done' });
    expect(await small.claim('live:h', LEASE)).toEqual({ status: 'busy' });
    expect(await small.claim('next:h', LEASE)).toEqual({ status: 'busy' });
  });

  it('accepts a PaymentsRuntime-like clock object', async () => {
    let t = 0;
    const withRuntime = new MemoryIdempotencyStore({ now: { now: () => t } });
    await withRuntime.claim('k', 10);
    t = 10;
    expect(await withRuntime.claim('k', 10)).toMatchObject({ status: 'claimed', attempt: 2 });
  });

  it('forgets everything on close', async () => {
    const { token } = await claimed('e1:h');
    await store.complete('e1:h', token, RETENTION);
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
