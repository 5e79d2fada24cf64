import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { RedisIdempotencyStore } from '../../lib/index.js';
import type { IntentWatchStore } from '../../lib/webhooks/index.js';

/*
 * Named instances sharing one Redis store (issue 29, defect 1): each instance's watch list and sweeper
 * lease are its own. Before, they were one: the lease holder retrieved the other account's intents with
 * its own key, got 404 and forgot them.
 */
const clusterNodes = (process.env.REDIS_CLUSTER_NODES ?? '')
  .split(',')
  .filter(Boolean)
  .map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) }));
const engines: Array<[string, () => Redis | Cluster]> = [
  ['a single Redis', () => new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')],
  ...(clusterNodes.length > 0
    ? ([['the Redis Cluster', () => new Cluster(clusterNodes)]] as Array<[string, () => Cluster]>)
    : []),
];

describe.each(engines)('watch lists per instance on %s', (_name, connect) => {
  const redis = connect();
  const keyPrefix = `payments-test:${randomBytes(4).toString('hex')}:`;
  const store = new RedisIdempotencyStore(redis, { keyPrefix });
  afterAll(async () => {
    for (const tag of ['{watch}', '{watch:eu}', '{watch:us}']) {
      for (const part of ['due', 'fresh', 'intents', 'lease']) await redis.del(`${keyPrefix}${tag}:${part}`);
    }
    redis.disconnect();
  });

  const watch = (list: IntentWatchStore, id: string) =>
    list.watch({ kind: 'payment_intent', id, createdAt: 0, nextCheckAt: 0, checks: 0 });

  it('keeps each instance its own list and lease; the unnamed instance keeps its keys as before', async () => {
    const [unnamed, eu, us] = [store.intentWatchStore(), store.intentWatchStore('eu'), store.intentWatchStore('us')];
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await watch(unnamed, a);
    await watch(eu, b);
    await watch(us, c);
    expect((await eu.due(1, 10)).map((intent) => intent.id)).toEqual([b]);
    expect((await us.due(1, 10)).map((intent) => intent.id)).toEqual([c]);
    expect((await unnamed.due(1, 10)).map((intent) => intent.id)).toEqual([a]);
    // Never checked yet: in the instance's :fresh set (read before :due).
    expect(await redis.zscore(`${keyPrefix}{watch}:fresh`, a)).toBe('0');
    // One sweeper per instance: eu's lease does not stop us's sweeper, nor another eu process.
    expect(await eu.lease('eu-process-1', 60_000)).toBe(true);
    expect(await us.lease('us-process-1', 60_000)).toBe(true);
    expect(await eu.lease('eu-process-2', 60_000)).toBe(false);
    // Forgetting in one list leaves the others.
    await eu.forget(c);
    expect((await us.due(1, 10)).map((intent) => intent.id)).toEqual([c]);
  });
});
