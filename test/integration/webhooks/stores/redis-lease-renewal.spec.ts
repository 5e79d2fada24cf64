import { afterAll, beforeAll, describe } from '@jest/globals';
import { Cluster, type Redis } from 'ioredis';
import { RedisIdempotencyStore } from '../../../../lib/index.js';
import { describeLeaseRenewal } from '../../../fixtures/webhooks/lease-renewal.scenario.js';
import {
  RUN_CLUSTER_SUITES,
  createCluster,
  createRedis,
  deleteClusterKeys,
  deleteKeys,
  quitAll,
  redisRecordKey,
  uniquePrefix,
} from '../../redis-test.util.js';

describe('RedisIdempotencyStore (real Redis)', () => {
  const prefix = uniquePrefix('lease');
  let redis: Redis;
  beforeAll(() => {
    redis = createRedis();
  });
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await quitAll(redis);
  });
  describeLeaseRenewal('Redis', {
    store: () => new RedisIdempotencyStore(redis, { keyPrefix: prefix }),
    forget: async (_store, key) => {
      await redis.del(redisRecordKey(prefix, key));
    },
  });
});

// Skipped without a cluster, except in CI where a missing cluster must fail the run.
(RUN_CLUSTER_SUITES ? describe : describe.skip)('RedisIdempotencyStore (real Redis Cluster)', () => {
  const prefix = uniquePrefix('cluster-lease');
  let cluster: Cluster;
  beforeAll(() => {
    cluster = createCluster();
  });
  afterAll(async () => {
    await deleteClusterKeys(cluster, prefix);
    await cluster.quit().catch(() => cluster.disconnect());
  });
  describeLeaseRenewal('Redis Cluster', {
    store: () => new RedisIdempotencyStore(cluster, { keyPrefix: prefix }),
    forget: async (_store, key) => {
      await cluster.del(redisRecordKey(prefix, key));
    },
  });
});
