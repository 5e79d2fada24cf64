import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Cluster, Redis } from 'ioredis';
import { PaymentsInvalidArgumentError } from '../../../../lib/errors/payments.errors.js';
import {
  RedisIdempotencyStore,
  type RedisScriptClient,
} from '../../../../lib/webhooks/stores/redis-idempotency.store.js';
import {
  createRedis,
  createUnreachableRedis,
  deadPort,
  deleteKeys,
  quitAll,
  uniquePrefix,
  waitFor,
} from '../../redis-test.util.js';

// Compile-time: both kinds of ioredis client are accepted (checked by `npm run typecheck`).
type Expect<T extends true> = T;
export type AcceptsIoredisRedis = Expect<Redis extends RedisScriptClient ? true : false>;
export type AcceptsIoredisCluster = Expect<Cluster extends RedisScriptClient ? true : false>;

const LONG_LEASE_MS = 60_000;
const RETENTION_MS = 60_000;

describe('RedisIdempotencyStore (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let store: RedisIdempotencyStore;

  beforeAll(() => {
    redis = createRedis();
  });

  beforeEach(() => {
    prefix = uniquePrefix('store');
    store = new RedisIdempotencyStore(redis, { keyPrefix: prefix });
  });

  afterEach(async () => {
    await deleteKeys(redis, prefix);
  });

  afterAll(async () => {
    await quitAll(redis);
  });

  it('[W4] grants exactly one of 100 concurrent claims on one key, across 4 clients', async () => {
    const clients = [redis, createRedis(), createRedis(), createRedis()];
    try {
      const stores = clients.map((client) => new RedisIdempotencyStore(client, { keyPrefix: prefix }));
      const claims = await Promise.all(
        Array.from({ length: 100 }, (_, i) => stores[i % stores.length]!.claim('evt-1:handler', LONG_LEASE_MS)),
      );
      expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c.status === 'busy')).toHaveLength(99);
    } finally {
      await quitAll(...clients.slice(1));
    }
  });

  it('answers claimed with attempt 1 on a new key, then busy while the lease is held', async () => {
    const first = await store.claim('evt-1:h', LONG_LEASE_MS);
    expect(first).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'busy' });
  });

  it('keeps claims of different handlers of one event apart', async () => {
    expect((await store.claim('evt-1:a', LONG_LEASE_MS)).status).toBe('claimed');
    expect((await store.claim('evt-1:b', LONG_LEASE_MS)).status).toBe('claimed');
  });

  it('[W4] answers done after the owner completes, for every later claim', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('evt-1:h', claim.token, RETENTION_MS);
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'done' });
    const other = new RedisIdempotencyStore(redis, { keyPrefix: prefix });
    expect(await other.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'done' });
  });

  it('keeps the done marker for the retention passed to complete', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('evt-1:h', claim.token, 123_000);
    const ttl = await redis.pttl(`${prefix}{evt-1:h}:done`);
    expect(ttl).toBeGreaterThan(100_000);
    expect(ttl).toBeLessThanOrEqual(123_000);
  });

  it('lets the key be claimed again once the lease expires, counting the attempt', async () => {
    const first = await store.claim('evt-1:h', 200);
    expect(first).toMatchObject({ status: 'claimed', attempt: 1 });
    const second = await waitFor(
      async () => {
        const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
        return claim.status === 'claimed' ? claim : undefined;
      },
      { what: 'the lease to expire' },
    );
    expect(second.attempt).toBe(2);
    if (first.status !== 'claimed') throw new Error('expected a claim');
    expect(second.token).not.toBe(first.token);
  });

  it('ignores complete with a token that does not own the lease', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('evt-1:h', 'not-the-owner', RETENTION_MS);
    expect(await redis.exists(`${prefix}{evt-1:h}:done`)).toBe(0);
    expect(await redis.get(`${prefix}{evt-1:h}:lease`)).toBe(claim.token);
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'busy' });
  });

  it('ignores release with a token that does not own the lease', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.release('evt-1:h', 'not-the-owner');
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'busy' });
  });

  it('ignores complete from an owner whose lease expired and was claimed by another delivery', async () => {
    const stale = await store.claim('evt-1:h', 100);
    if (stale.status !== 'claimed') throw new Error('expected a claim');
    const fresh = await waitFor(async () => {
      const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
      return claim.status === 'claimed' ? claim : undefined;
    });
    await store.complete('evt-1:h', stale.token, RETENTION_MS);
    expect(await redis.get(`${prefix}{evt-1:h}:lease`)).toBe(fresh.token);
    expect(await redis.exists(`${prefix}{evt-1:h}:done`)).toBe(0);
  });

  it('lets an owner whose lease lapsed complete it while nobody else claimed it', async () => {
    const claim = await store.claim('evt-1:h', 50);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await waitFor(async () => ((await redis.exists(`${prefix}{evt-1:h}:lease`)) === 0 ? true : undefined), {
      what: 'the lease to lapse',
    });
    await store.complete('evt-1:h', claim.token, RETENTION_MS);
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'done' });
  });

  it('ignores complete with a wrong token after the lease lapsed', async () => {
    const claim = await store.claim('evt-1:h', 50);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await waitFor(async () => ((await redis.exists(`${prefix}{evt-1:h}:lease`)) === 0 ? true : undefined), {
      what: 'the lease to lapse',
    });
    await store.complete('evt-1:h', 'not-the-owner', RETENTION_MS);
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toMatchObject({ status: 'claimed', attempt: 2 });
  });

  it('ignores complete from an owner that already released', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.release('evt-1:h', claim.token);
    await store.complete('evt-1:h', claim.token, RETENTION_MS);
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toMatchObject({ status: 'claimed', attempt: 2 });
  });

  it('[W4] lets a redelivery claim again after the owner releases, with the next attempt number', async () => {
    const first = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (first.status !== 'claimed') throw new Error('expected a claim');
    await store.release('evt-1:h', first.token);
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toMatchObject({ status: 'claimed', attempt: 2 });
  });

  it('counts attempts across releases: 1, 2, 3', async () => {
    const attempts: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      attempts.push(claim.attempt);
      await store.release('evt-1:h', claim.token);
    }
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('loads its scripts again after SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
    await store.claim('evt-warm:h', LONG_LEASE_MS);
    await redis.script('FLUSH');
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toMatchObject({ status: 'claimed', attempt: 1 });
  });

  it('writes only keys under its keyPrefix', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('evt-1:h', claim.token, RETENTION_MS);
    const [, keys] = await redis.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 1000);
    expect(keys.sort()).toEqual([`${prefix}{evt-1:h}:done`, `${prefix}{evt-1:h}:state`]);
  });

  describe('when Redis is unreachable', () => {
    let dead: Redis;
    let deadStore: RedisIdempotencyStore;

    beforeAll(async () => {
      dead = createUnreachableRedis(await deadPort());
      deadStore = new RedisIdempotencyStore(dead, { keyPrefix: uniquePrefix('dead') });
    });

    afterAll(() => {
      dead.disconnect();
    });

    it('rejects claim (never answers claimed without Redis)', async () => {
      await expect(deadStore.claim('evt-1:h', LONG_LEASE_MS)).rejects.toThrow();
    });

    it('rejects complete and release', async () => {
      await expect(deadStore.complete('evt-1:h', 'token', RETENTION_MS)).rejects.toThrow();
      await expect(deadStore.release('evt-1:h', 'token')).rejects.toThrow();
    });
  });

  it('refuses a value that is not a Redis client', () => {
    expect(() => new RedisIdempotencyStore({} as never)).toThrow(PaymentsInvalidArgumentError);
    expect(() => new RedisIdempotencyStore({} as never)).toThrow(
      /^RedisIdempotencyStore: `redis` must be an ioredis client/,
    );
  });
});
