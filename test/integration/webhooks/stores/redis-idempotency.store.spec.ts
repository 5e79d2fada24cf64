import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Cluster, type Redis } from 'ioredis';
import { PaymentsInvalidArgumentError } from '../../../../lib/errors/payments.errors.js';
import {
  RedisIdempotencyStore,
  type RedisScriptClient,
} from '../../../../lib/webhooks/stores/redis-idempotency.store.js';
import { describeIdempotencyStore } from '../../../../lib/testing/index.js';
import {
  RUN_CLUSTER_SUITES,
  createCluster,
  createRedis,
  deleteClusterKeys,
  redisClaimKeys,
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

// The contract every store keeps (claim races, tokens, expiry, release, retention, renewal), on one node.
describe('RedisIdempotencyStore contract (real Redis)', () => {
  const contractPrefix = uniquePrefix('contract');
  let client: Redis;
  beforeAll(() => {
    client = createRedis();
  });
  afterAll(async () => {
    await deleteKeys(client, contractPrefix);
    await quitAll(client);
  });
  describeIdempotencyStore(
    'RedisIdempotencyStore',
    () => new RedisIdempotencyStore(client, { keyPrefix: contractPrefix }),
    {
      forget: async (_store, key) => {
        await client.del(...redisClaimKeys(contractPrefix, key));
      },
    },
  );
});

/*
 * The same contract on Redis Cluster (`REDIS_CLUSTER_NODES`, started by .ci/redis-cluster.sh): every
 * script, renew included, touches only keys of one hash tag, or the cluster refuses it (CROSSSLOT).
 * Skipped without a cluster, except in CI where a missing cluster must fail the run.
 */
(RUN_CLUSTER_SUITES ? describe : describe.skip)('RedisIdempotencyStore contract (real Redis Cluster)', () => {
  const contractPrefix = uniquePrefix('cluster-contract');
  let cluster: Cluster;
  beforeAll(() => {
    cluster = createCluster();
  });
  afterAll(async () => {
    await deleteClusterKeys(cluster, contractPrefix);
    await cluster.quit().catch(() => cluster.disconnect());
  });
  describeIdempotencyStore(
    'RedisIdempotencyStore on Redis Cluster',
    () => new RedisIdempotencyStore(cluster, { keyPrefix: contractPrefix }),
    {
      forget: async (_store, key) => {
        await cluster.del(...redisClaimKeys(contractPrefix, key));
      },
    },
  );
});

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

  it('ignores complete with a token that does not own the lease', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('evt-1:h', 'not-the-owner', RETENTION_MS);
    expect(await redis.exists(`${prefix}{evt-1:h}:done`)).toBe(0);
    expect(await redis.get(`${prefix}{evt-1:h}:lease`)).toBe(claim.token);
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

  it('loads its scripts again after SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
    await store.claim('evt-warm:h', LONG_LEASE_MS);
    await redis.script('FLUSH');
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    expect(claim).toMatchObject({ status: 'claimed', attempt: 1 });
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await redis.script('FLUSH');
    expect(await store.renew('evt-1:h', claim.token, LONG_LEASE_MS)).toBe(true);
  });

  it('renew sets the lease key to the lease asked for, with the owner token, and keeps the state at least as long', async () => {
    const claim = await store.claim('evt-1:h', 1_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    expect(await store.renew('evt-1:h', claim.token, 123_000)).toBe(true);
    expect(await redis.get(`${prefix}{evt-1:h}:lease`)).toBe(claim.token);
    const leaseTtl = await redis.pttl(`${prefix}{evt-1:h}:lease`);
    expect(leaseTtl).toBeGreaterThan(100_000);
    expect(leaseTtl).toBeLessThanOrEqual(123_000);
    const short = new RedisIdempotencyStore(redis, { keyPrefix: prefix, attemptsTtlSeconds: 1 });
    const other = await short.claim('evt-2:h', 500);
    if (other.status !== 'claimed') throw new Error('expected a claim');
    expect(await short.renew('evt-2:h', other.token, 5_000)).toBe(true);
    expect(await redis.pttl(`${prefix}{evt-2:h}:state`)).toBeGreaterThan(4_000);
  });

  it('renew with a token that does not own the lease changes nothing in Redis', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const before = await redis.pttl(`${prefix}{evt-1:h}:lease`);
    expect(await store.renew('evt-1:h', 'not-the-owner', 600_000)).toBe(false);
    expect(await redis.get(`${prefix}{evt-1:h}:lease`)).toBe(claim.token);
    expect(await redis.pttl(`${prefix}{evt-1:h}:lease`)).toBeLessThanOrEqual(before);
  });

  it('writes only keys under its keyPrefix', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.renew('evt-1:h', claim.token, LONG_LEASE_MS);
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

    it('rejects complete, release and renew', async () => {
      await expect(deadStore.complete('evt-1:h', 'token', RETENTION_MS)).rejects.toThrow();
      await expect(deadStore.release('evt-1:h', 'token')).rejects.toThrow();
      await expect(deadStore.renew('evt-1:h', 'token', LONG_LEASE_MS)).rejects.toThrow();
    });
  });

  it('refuses a value that is not a Redis client', () => {
    expect(() => new RedisIdempotencyStore({} as never)).toThrow(PaymentsInvalidArgumentError);
    expect(() => new RedisIdempotencyStore({} as never)).toThrow(
      /^RedisIdempotencyStore: `redis` must be an ioredis client/,
    );
  });
});
