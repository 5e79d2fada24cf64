import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { Queue } from 'bullmq';
import { Cluster, type Redis } from 'ioredis';
import { PaymentsConfigurationError } from '../../lib/errors/payments.errors.js';
import { PaymentsModule, type PaymentEvent } from '../../lib/index.js';
import { createPaymentEvent } from '../../lib/testing/index.js';
import { RedisIdempotencyStore } from '../../lib/webhooks/stores/redis-idempotency.store.js';
const EVENT_ID = '7c9e1a3b-5d7f-4b2d-9e4f-1a3c5e7b9d2f';
import {
  HandlerScript,
  deliver,
  redisAppOptions,
  signedDelivery,
  startRedisWebhookApp,
  type RedisWebhookApp,
} from '../fixtures/redis/redis-webhook-app.fixture.js';
import {
  REDIS_CLUSTER_NODES,
  createCluster,
  createRedis,
  deleteClusterKeys,
  deleteKeys,
  quitAll,
  uniquePrefix,
  waitFor,
} from './redis-test.util.js';

/**
 * The Redis suites on Redis Cluster: `REDIS_CLUSTER_NODES=127.0.0.1:7101,127.0.0.1:7102,...` (CI starts
 * a local 3-master cluster with .ci/redis-cluster.sh). Without it the cluster tests skip locally; with
 * CI=true they must not, so a missing cluster fails the run.
 */
const NODES = REDIS_CLUSTER_NODES;
const IN_CI = process.env.CI === 'true';

/** How many keys starting with `prefix` each master holds. */
async function keysPerMaster(cluster: Cluster, prefix: string): Promise<number[]> {
  const counts: number[] = [];
  for (const node of cluster.nodes('master')) {
    let cursor = '0';
    let count = 0;
    do {
      const [next, keys] = await (node as Redis).scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      count += keys.length;
    } while (cursor !== '0');
    counts.push(count);
  }
  return counts;
}

/** Quits Cluster clients (and their node connections). */
async function quitClusters(...clusters: Cluster[]): Promise<void> {
  await Promise.all(clusters.map((cluster) => cluster.quit().catch(() => cluster.disconnect())));
}

const sameIdInOtherCases = (event: PaymentEvent): PaymentEvent[] => [
  { ...event, id: event.id.toUpperCase() },
  { ...event, id: event.id.replace(/[a-f]/g, (c, i: number) => (i % 2 === 0 ? c.toUpperCase() : c)) },
];

describe('Redis Cluster in this environment', () => {
  it(
    IN_CI
      ? 'REDIS_CLUSTER_NODES is set (CI must run the cluster suites, not skip them)'
      : 'REDIS_CLUSTER_NODES is set, or the cluster suites skip (not CI)',
    () => {
      if (IN_CI) expect(NODES.length).toBeGreaterThanOrEqual(3);
    },
  );
});

const describeCluster = NODES.length > 0 ? describe : describe.skip;

describeCluster('RedisIdempotencyStore on Redis Cluster (hash-tagged keys, Lua scripts)', () => {
  let cluster: Cluster;
  let prefix: string;
  beforeAll(async () => {
    cluster = createCluster();
    await waitFor(async () => ((await cluster.cluster('INFO')) as string).includes('cluster_state:ok') || undefined, {
      what: 'cluster_state:ok',
    });
    prefix = uniquePrefix('cluster-store');
  });
  afterAll(async () => {
    await deleteClusterKeys(cluster, prefix);
    await quitClusters(cluster);
  });

  const run = (leaseMs: number) => ({ slot: 'succeeded|Handler.run', eventId: EVENT_ID, leaseMs });

  it('[W4] grants exactly one of 100 concurrent claims on one slot, across 4 cluster clients', async () => {
    const clients = [cluster, createCluster(), createCluster(), createCluster()];
    try {
      const stores = clients.map((client) => new RedisIdempotencyStore(client, { keyPrefix: prefix }));
      const claims = await Promise.all(
        Array.from({ length: 100 }, (_, i) => stores[i % stores.length]!.claim('i:race', run(60_000))),
      );
      expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c.status === 'busy')).toHaveLength(99);
    } finally {
      await quitClusters(...clients.slice(1));
    }
  });

  it('[W4] claim, complete and release run as one script on one key, on every master: 60 intents spread over the slots', async () => {
    const store = new RedisIdempotencyStore(cluster, { keyPrefix: `${prefix}spread:` });
    const keys = Array.from({ length: 60 }, () => `i:${randomUUID()}`);
    for (const [index, key] of keys.entries()) {
      const claim = await store.claim(key, run(60_000));
      if (claim.status !== 'claimed') throw new Error(`expected a claim of ${key}`);
      if (index % 2 === 0)
        await store.complete(key, { slot: run(0).slot, token: claim.token, eventId: EVENT_ID, retentionMs: 60_000 });
      else await store.release(key, { slot: run(0).slot, token: claim.token });
    }
    for (const [index, key] of keys.entries()) {
      expect(await store.claim(key, run(60_000))).toMatchObject(
        index % 2 === 0 ? { status: 'done' } : { status: 'claimed', attempt: 2 },
      );
    }
    const perMaster = await keysPerMaster(cluster, `${prefix}spread:`);
    expect(perMaster).toHaveLength(NODES.length);
    expect(perMaster.every((count) => count > 0)).toBe(true);
  });
});

describe.each([
  ['standalone Redis', false],
  ['Redis Cluster', true],
] as const)('receiver with RedisIdempotencyStore on %s: case-variant ids', (_label, onCluster) => {
  const run = onCluster && NODES.length === 0 ? it.skip : it;
  let client: Redis | Cluster;
  let prefix: string;
  let app: RedisWebhookApp | undefined;
  beforeAll(() => {
    if (onCluster && NODES.length === 0) return;
    client = onCluster ? createCluster() : createRedis();
    prefix = uniquePrefix('case-ids');
  });
  afterAll(async () => {
    await app?.close();
    if (!client) return;
    if (onCluster) {
      await deleteClusterKeys(client as Cluster, prefix);
      await quitClusters(client as Cluster);
    } else {
      await deleteKeys(client as Redis, prefix);
      await quitAll(client as Redis);
    }
  });

  run('[W4] a redelivery of the same event id in upper or mixed case runs no handler again', async () => {
    const script = new HandlerScript();
    app = await startRedisWebhookApp({
      instance: 'A',
      script,
      store: new RedisIdempotencyStore(client, { keyPrefix: prefix }),
    });
    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await deliver(app.webhookUrl, signedDelivery(event))).body.outcome).toBe('handled');
    for (const variant of sameIdInOtherCases(event)) {
      expect(await deliver(app.webhookUrl, signedDelivery(variant))).toEqual({
        status: 200,
        body: { received: true, outcome: 'duplicate' },
      });
    }
    expect(script.runs).toEqual([{ instance: 'A', eventId: event.id, deliveryAttempt: 1 }]);
  });
});

describeCluster('queued mode with BullMQ on Redis Cluster', () => {
  let cluster: Cluster;
  const closers: Array<() => Promise<void>> = [];
  const storePrefix = uniquePrefix('cluster-queued');
  const queuePrefix = `{test-payments-${randomUUID().slice(0, 8)}}`;
  const queueName = 'payments-webhooks';

  beforeAll(() => {
    cluster = createCluster();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    const cleaner = new Queue(queueName, { connection: createCluster(), prefix: queuePrefix });
    await cleaner.obliterate({ force: true });
    await cleaner.close();
    await (cleaner.opts.connection as unknown as Cluster).quit().catch(() => undefined);
    await deleteClusterKeys(cluster, storePrefix);
    await deleteClusterKeys(cluster, queuePrefix);
    await quitClusters(cluster);
  });

  async function instance(name: string, script: HandlerScript, prefix: string = queuePrefix): Promise<RedisWebhookApp> {
    const started = await startRedisWebhookApp({
      instance: name,
      script,
      store: new RedisIdempotencyStore(cluster, { keyPrefix: storePrefix }),
      processing: { queue: { connection: cluster, name: queueName, prefix, backoff: { type: 'fixed', delay: 20 } } },
    });
    closers.push(started.close);
    return started;
  }

  it('[W3] [W4] enqueues each event once (case variants included) and runs its handler once, with two instances', async () => {
    const script = new HandlerScript();
    const instances = [await instance('A', script), await instance('B', script)];
    const events = Array.from({ length: 10 }, () => createPaymentEvent('payment_intent.succeeded'));
    const deliveries = events.flatMap((event) => [event, ...sameIdInOtherCases(event)]);
    const answers = await Promise.all(
      deliveries.flatMap((event) => instances.map((i) => deliver(i.webhookUrl, signedDelivery(event)))),
    );
    expect(
      answers.every((a) => a.status === 200 && (a.body.outcome === 'enqueued' || a.body.outcome === 'duplicate')),
    ).toBe(true);

    const inspector = new Queue(queueName, { connection: cluster, prefix: queuePrefix });
    closers.push(() => inspector.close());
    await waitFor(async () => ((await inspector.getCompletedCount()) === events.length ? true : undefined), {
      what: 'every job to complete',
    });
    // One job per event: the job id is the canonical event id, so case variants were the same job.
    const counts = await inspector.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized');
    expect(Object.values(counts).reduce((sum, n) => sum + n, 0)).toBe(events.length);
    for (const event of events) {
      expect(await inspector.getJobState(event.id)).toBe('completed');
      expect(script.runsOf(event.id)).toHaveLength(1);
    }
    expect(script.runs).toHaveLength(events.length);
    // BullMQ's keys all carry the prefix's hash tag: one slot, one master.
    expect((await keysPerMaster(cluster, queuePrefix)).filter((count) => count > 0)).toHaveLength(1);
  });

  it('refuses to boot on a Cluster connection when the queue prefix has no hash tag, naming the option and the fix', async () => {
    const options = redisAppOptions({ processing: { queue: { connection: cluster, name: queueName } } });
    const boot = Test.createTestingModule({ imports: [PaymentsModule.forRoot(options)] }).compile();
    await expect(boot).rejects.toThrow(PaymentsConfigurationError);
    await expect(boot).rejects.toThrow(/`webhooks\.processing\.queue\.prefix`.*Redis Cluster.*prefix: '\{payments\}'/);
    // A hash tag in the prefix (or in the queue name) is accepted.
    const tagged = redisAppOptions({
      processing: { queue: { connection: cluster, name: queueName, prefix: '{payments}', worker: false } },
    });
    expect(() => PaymentsModule.forRoot(tagged)).not.toThrow();
  });
});
