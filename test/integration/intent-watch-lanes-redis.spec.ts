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

  it("drops an index entry whose record is no longer watched (its terminal state's completion ended the watch)", async () => {
    const store = new RedisIdempotencyStore(redis, { keyPrefix: `${root}${prefixes.length}:` });
    prefixes.push(`${root}${prefixes.length}:`);
    const list = store.intentWatchStore('eu');
    const prefix = `${prefixes.at(-1)}{watch:eu}`;
    const [settled, waiting] = [randomUUID(), randomUUID()];
    await list.watch({ kind: 'payment_intent', id: settled, createdAt: 5, nextCheckAt: 100, checks: 0 });
    await list.watch({ kind: 'payment_intent', id: waiting, createdAt: 6, nextCheckAt: 200, checks: 0 });
    const slot = 'succeeded|Shop.paid';
    const claim = await store.claim(`eu:i:${settled}`, { slot, eventId: settled, leaseMs: 60_000 });
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete(`eu:i:${settled}`, {
      slot,
      token: claim.token,
      eventId: settled,
      retentionMs: 60_000,
      unwatch: true,
    });
    // The index still lists it (another slot of the Cluster): the sweep's read drops it.
    expect(await redis.zscore(`${prefix}:fresh`, settled)).toBe('100');
    expect(await list.due(1_000, 10)).toEqual([
      { kind: 'payment_intent', id: waiting, createdAt: 6, nextCheckAt: 200, checks: 0 },
    ]);
    expect(await redis.zscore(`${prefix}:fresh`, settled)).toBeNull();
  });
});
