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
  redisRecordKey,
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
        await client.del(redisRecordKey(contractPrefix, key));
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
        await cluster.del(redisRecordKey(contractPrefix, key));
      },
    },
  );
});

const SLOT = 'succeeded|Handler.method';
const EVENT = '2f4a6c8e-0b1d-4e3f-a5b7-c9d1e3f5a7b9';
const claimOf = (leaseMs: number, eventId: string | undefined = EVENT) => ({ slot: SLOT, eventId, leaseMs });
const doneOf = (token: string, retentionMs: number) => ({ slot: SLOT, token, eventId: EVENT, retentionMs });

describe('RedisIdempotencyStore (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let store: RedisIdempotencyStore;
  const KEY = 'i:8c1e0d3a-5b7f-4e9a-8d2c-6f4b1a3e5c7d';

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

  const claimed = async (leaseMs = LONG_LEASE_MS) => {
    const claim = await store.claim(KEY, claimOf(leaseMs));
    if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
    return claim;
  };

  it('[W4] grants exactly one of 100 concurrent claims on one slot, across 4 clients', async () => {
    const clients = [redis, createRedis(), createRedis(), createRedis()];
    try {
      const stores = clients.map((client) => new RedisIdempotencyStore(client, { keyPrefix: prefix }));
      const claims = await Promise.all(
        Array.from({ length: 100 }, (_, i) => stores[i % stores.length]!.claim(KEY, claimOf(LONG_LEASE_MS))),
      );
      expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c.status === 'busy')).toHaveLength(99);
    } finally {
      await quitAll(...clients.slice(1));
    }
  });

  it('[W4] answers done after the owner completes, for every later claim, from any client', async () => {
    const claim = await claimed();
    await store.complete(KEY, doneOf(claim.token, RETENTION_MS));
    expect(await store.claim(KEY, claimOf(LONG_LEASE_MS))).toEqual({ status: 'done' });
    const other = new RedisIdempotencyStore(redis, { keyPrefix: prefix });
    expect(await other.claim(KEY, claimOf(LONG_LEASE_MS))).toEqual({ status: 'done' });
  });

  it('keeps one hash per record, expiring with the retention passed to complete once no run keeps it', async () => {
    const claim = await claimed();
    await store.complete(KEY, doneOf(claim.token, 123_000));
    const ttl = await redis.pttl(`${prefix}{${KEY}}`);
    expect(ttl).toBeGreaterThan(100_000);
    expect(ttl).toBeLessThanOrEqual(123_000);
    expect(await redis.hget(`${prefix}{${KEY}}`, `d:${SLOT}`)).toMatch(new RegExp(`^\\d+;${EVENT}$`));
  });

  it('ignores complete with a token that does not own the slot: the record is unchanged', async () => {
    const claim = await claimed();
    const before = await redis.hgetall(`${prefix}{${KEY}}`);
    await store.complete(KEY, doneOf('not-the-owner', RETENTION_MS));
    expect(await redis.hgetall(`${prefix}{${KEY}}`)).toEqual(before);
    expect(before[`r:${SLOT}`]).toMatch(new RegExp(`^${claim.token}\\|`));
    expect(await store.claim(KEY, claimOf(LONG_LEASE_MS))).toEqual({ status: 'busy' });
  });

  it('ignores complete from an owner whose lease expired and was claimed by another delivery', async () => {
    const stale = await claimed(100);
    const fresh = await waitFor(async () => {
      const claim = await store.claim(KEY, claimOf(LONG_LEASE_MS));
      return claim.status === 'claimed' ? claim : undefined;
    });
    await store.complete(KEY, doneOf(stale.token, RETENTION_MS));
    expect(await redis.hget(`${prefix}{${KEY}}`, `r:${SLOT}`)).toMatch(new RegExp(`^${fresh.token}\\|`));
    expect(await redis.hexists(`${prefix}{${KEY}}`, `d:${SLOT}`)).toBe(0);
  });

  it('loads its scripts again after SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
    await store.claim('i:warm', claimOf(LONG_LEASE_MS));
    await redis.script('FLUSH');
    const claim = await claimed();
    expect(claim).toMatchObject({ status: 'claimed', attempt: 1 });
    await redis.script('FLUSH');
    expect(await store.renew(KEY, { slot: SLOT, token: claim.token, leaseMs: LONG_LEASE_MS })).toBe(true);
  });

  it('renew moves the lease end to the lease asked for, and keeps the record at least as long', async () => {
    const short = new RedisIdempotencyStore(redis, { keyPrefix: prefix, attemptsTtlSeconds: 1 });
    const claim = await short.claim(KEY, claimOf(500));
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const before = Date.now();
    expect(await short.renew(KEY, { slot: SLOT, token: claim.token, leaseMs: 123_000 })).toBe(true);
    const [, until] = (await redis.hget(`${prefix}{${KEY}}`, `r:${SLOT}`))!.split('|');
    expect(Number(until)).toBeGreaterThan(before + 100_000);
    expect(await redis.pttl(`${prefix}{${KEY}}`)).toBeGreaterThan(100_000);
  });

  it('renew with a token that does not own the slot changes nothing in Redis', async () => {
    await claimed();
    const before = await redis.hgetall(`${prefix}{${KEY}}`);
    expect(await store.renew(KEY, { slot: SLOT, token: 'not-the-owner', leaseMs: 600_000 })).toBe(false);
    expect(await redis.hgetall(`${prefix}{${KEY}}`)).toEqual(before);
  });

  it('writes only one key per record, under its keyPrefix', async () => {
    const claim = await claimed();
    await store.renew(KEY, { slot: SLOT, token: claim.token, leaseMs: LONG_LEASE_MS });
    await store.complete(KEY, doneOf(claim.token, RETENTION_MS));
    const other = await store.claim(KEY, { slot: 'cancelled|Other.h', eventId: EVENT, leaseMs: LONG_LEASE_MS });
    if (other.status !== 'claimed') throw new Error('expected a claim');
    await store.release(KEY, { slot: 'cancelled|Other.h', token: other.token });
    const [, keys] = await redis.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 1000);
    expect(keys).toEqual([`${prefix}{${KEY}}`]);
  });

  it('deletes a record once nothing of it is to be kept (its retention ended, no run, no watch)', async () => {
    const claim = await claimed();
    await store.complete(KEY, doneOf(claim.token, 200));
    await waitFor(async () => ((await redis.exists(`${prefix}{${KEY}}`)) === 0 ? true : undefined));
    expect(await store.claim(KEY, claimOf(LONG_LEASE_MS))).toMatchObject({ status: 'claimed', attempt: 1 });
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
      await expect(deadStore.claim(KEY, claimOf(LONG_LEASE_MS))).rejects.toThrow();
    });

    it('rejects complete, release and renew', async () => {
      await expect(deadStore.complete(KEY, doneOf('token', RETENTION_MS))).rejects.toThrow();
      await expect(deadStore.release(KEY, { slot: SLOT, token: 'token' })).rejects.toThrow();
      await expect(deadStore.renew(KEY, { slot: SLOT, token: 'token', leaseMs: LONG_LEASE_MS })).rejects.toThrow();
    });
  });

  it('refuses a value that is not a Redis client', () => {
    expect(() => new RedisIdempotencyStore({} as never)).toThrow(PaymentsInvalidArgumentError);
    expect(() => new RedisIdempotencyStore({} as never)).toThrow(
      /^RedisIdempotencyStore: `redis` must be an ioredis client/,
    );
  });
});
