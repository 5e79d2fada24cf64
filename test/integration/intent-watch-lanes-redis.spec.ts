import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Cluster, Redis } from 'ioredis';
import { RedisIdempotencyStore } from '../../lib/index.js';
import { itKeepsTheDueLanes } from '../fixtures/webhooks/intent-watch-lanes.contract.js';
import {
  createCluster,
  createRedis,
  deleteClusterKeys,
  REDIS_CLUSTER_NODES,
  RUN_CLUSTER_SUITES,
  uniquePrefix,
} from './redis-test.util.js';

/*
 * The Redis watch list's lanes (issue 31, item 4): `:fresh` (never checked) read before `:due`, both
 * under the instance's hash tag, so the scripts run on a Cluster too.
 */
const engines: Array<[string, () => Redis | Cluster]> = [
  ['a single Redis', () => createRedis()],
  ...(RUN_CLUSTER_SUITES || REDIS_CLUSTER_NODES.length > 0
    ? ([['the Redis Cluster', () => createCluster()]] as Array<[string, () => Cluster]>)
    : []),
];

describe.each(engines)('RedisIntentWatchStore lanes on %s', (name, connect) => {
  const redis = connect();
  const root = uniquePrefix('watch-lanes');
  afterAll(async () => {
    if (name === 'the Redis Cluster') await deleteClusterKeys(redis as Cluster, root);
    else {
      const keys = await (redis as Redis).keys(`${root}*`);
      if (keys.length > 0) await (redis as Redis).del(...keys);
    }
    redis.disconnect();
  });
  const prefixes: string[] = [];
  const fresh = () => {
    const keyPrefix = `${root}${prefixes.length}:`;
    prefixes.push(keyPrefix);
    return new RedisIdempotencyStore(redis, { keyPrefix }).intentWatchStore('eu');
  };

  itKeepsTheDueLanes(fresh);

  it('keeps a new intent in :fresh until its first check moves it to :due, both under one hash tag', async () => {
    const list = fresh();
    const prefix = `${prefixes.at(-1)}{watch:eu}`;
    const id = randomUUID();
    await list.watch({ kind: 'payment_intent', id, createdAt: 1, nextCheckAt: 60_001, checks: 0 });
    expect(await redis.zscore(`${prefix}:fresh`, id)).toBe('60001');
    expect(await redis.zscore(`${prefix}:due`, id)).toBeNull();
    await list.reschedule(id, 120_001, 1);
    expect(await redis.zscore(`${prefix}:fresh`, id)).toBeNull();
    expect(await redis.zscore(`${prefix}:due`, id)).toBe('120001');
    await list.forget(id);
    expect(await redis.exists(`${prefix}:fresh`, `${prefix}:due`, `${prefix}:intents`)).toBe(0);
  });

  it('reads a list written before the lanes (every intent in :due), and drops a member whose intent an older release forgot', async () => {
    const list = fresh();
    const prefix = `${prefixes.at(-1)}{watch:eu}`;
    const [before, orphan, added] = [randomUUID(), randomUUID(), randomUUID()];
    // What the previous release wrote: its watch put a new intent in :due.
    await redis.hset(`${prefix}:intents`, before, JSON.stringify({ kind: 'payment_intent', createdAt: 5, checks: 0 }));
    await redis.zadd(`${prefix}:due`, 100, before);
    // Its forget removed :due and the hash only: a :fresh member may be left behind.
    await redis.zadd(`${prefix}:fresh`, 50, orphan);
    await list.watch({ kind: 'payment_intent', id: added, createdAt: 6, nextCheckAt: 200, checks: 0 });
    expect((await list.due(1_000, 10)).map((i) => i.id)).toEqual([added, before]);
    expect(await redis.zscore(`${prefix}:fresh`, orphan)).toBeNull();
    expect(await list.due(1_000, 10)).toEqual([
      { kind: 'payment_intent', id: added, createdAt: 6, nextCheckAt: 200, checks: 0 },
      { kind: 'payment_intent', id: before, createdAt: 5, nextCheckAt: 100, checks: 0 },
    ]);
  });
});
