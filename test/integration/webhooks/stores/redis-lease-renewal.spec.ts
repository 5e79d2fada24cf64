import { afterAll, beforeAll, describe } from '@jest/globals';
import { Cluster, type Redis } from 'ioredis';
import { RedisIdempotencyStore } from '../../../../lib/index.js';
import { describeLeaseRenewal } from '../../../fixtures/webhooks/lease-renewal.scenario.js';
import { createRedis, deleteKeys, quitAll, uniquePrefix } from '../../redis-test.util.js';

/** The three keys of one claim (done marker, lease, state), all under the claim's hash tag. */
const claimKeys = (prefix: string, key: string): string[] =>
  ['done', 'lease', 'state'].map((part) => `${prefix}{${key}}:${part}`);

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
      await redis.del(...claimKeys(prefix, key));
    },
  });
});

const CLUSTER_NODES = (process.env.REDIS_CLUSTER_NODES ?? '')
  .split(',')
  .map((node) => node.trim())
  .filter((node) => node !== '')
  .map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) }));
// Skipped without a cluster, except in CI where a missing cluster must fail the run.
const onCluster = CLUSTER_NODES.length > 0 || process.env.CI === 'true';
(onCluster ? describe : describe.skip)('RedisIdempotencyStore (real Redis Cluster)', () => {
  const prefix = uniquePrefix('cluster-lease');
  let cluster: Cluster;
  beforeAll(() => {
    cluster = new Cluster(CLUSTER_NODES, { redisOptions: { maxRetriesPerRequest: 3 } });
  });
  afterAll(async () => {
    for (const node of cluster.nodes('master') as Redis[]) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        cursor = next;
        for (const key of keys) await node.del(key);
      } while (cursor !== '0');
    }
    await cluster.quit().catch(() => cluster.disconnect());
  });
  describeLeaseRenewal('Redis Cluster', {
    store: () => new RedisIdempotencyStore(cluster, { keyPrefix: prefix }),
    forget: async (_store, key) => {
      await cluster.del(...claimKeys(prefix, key));
    },
  });
});
