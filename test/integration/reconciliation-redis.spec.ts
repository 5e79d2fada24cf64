import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { OnPaymentEvent, RedisIdempotencyStore, type PaymentEvent, type PaymentEventContext } from '../../lib/index.js';
import { mixedRun, startReconcileShop, type ReconcileShop } from '../fixtures/reconcile/reconcile-shop.fixture.js';

/*
 * Reconciliation with the Redis store (issue 24), on a single node and on the 3-master Cluster when
 * REDIS_CLUSTER_NODES is set: the watch list and the sweeper lease live beside the claims.
 */
@Injectable()
class CountingShop {
  readonly fulfilled: Array<{ intent: string; source: PaymentEventContext['source'] }> = [];
  readonly released: string[] = [];

  @OnPaymentEvent('payment_intent.succeeded')
  fulfil(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): void {
    this.fulfilled.push({ intent: String(event.data.payment_intent?.['id']), source: ctx.source });
  }

  @OnPaymentEvent('payment_intent.cancelled')
  release(event: PaymentEvent<'payment_intent.cancelled'>): void {
    this.released.push(String(event.data.payment_intent?.['id']));
  }
}

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

describe.each(engines)('reconciliation on %s', (_name, connect) => {
  let redis: Redis | Cluster;
  let shop: ReconcileShop;
  const keyPrefix = `test:reconcile:${randomBytes(4).toString('hex')}:`;

  beforeAll(async () => {
    redis = connect();
    shop = await startReconcileShop([CountingShop], { store: new RedisIdempotencyStore(redis, { keyPrefix }) });
  });
  afterAll(async () => {
    await shop?.close();
    const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
    for (const node of nodes) {
      const keys = await node.keys(`${keyPrefix}*`);
      for (const key of keys) await node.del(key);
    }
    redis?.disconnect();
  });

  it('30 orders, a third of the webhooks dropped and a third late: every paid order handled once, no cancelled one', async () => {
    const { paid, cancelled } = await mixedRun(shop, 30);
    const fulfilled = shop.app.get(CountingShop).fulfilled;
    const counts = new Map<string, number>();
    for (const run of fulfilled) counts.set(run.intent, (counts.get(run.intent) ?? 0) + 1);
    expect(paid.filter((id) => counts.get(id) !== 1)).toEqual([]);
    expect(cancelled.filter((id) => counts.has(id))).toEqual([]);
    expect(new Set(fulfilled.map((run) => run.source))).toEqual(new Set(['webhook', 'reconciliation']));
    expect(shop.app.get(CountingShop).released.sort()).toEqual([...cancelled].sort());
    expect(await shop.reconciler.sweep()).toMatchObject({ checked: 0 });
  });
});
