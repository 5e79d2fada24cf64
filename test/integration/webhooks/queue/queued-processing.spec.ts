import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { INestApplicationContext } from '@nestjs/common';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { PaymentsQueueOptions } from '../../../../lib/payments-options.interface.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { PaymentEventsQueue } from '../../../../lib/webhooks/queue/payment-events.queue.js';
import { RedisIdempotencyStore } from '../../../../lib/webhooks/stores/redis-idempotency.store.js';
import {
  HandlerScript,
  deliver,
  signedDelivery,
  startRedisWebhookApp,
  startRedisWorkerContext,
  type RedisWebhookApp,
} from '../../../fixtures/redis/redis-webhook-app.fixture.js';
import {
  REDIS_URL,
  createRedis,
  deadPort,
  deleteKeys,
  quitAll,
  uniquePrefix,
  uniqueQueueName,
  waitFor,
} from '../../redis-test.util.js';

/** Queued processing (`webhooks.processing: { queue }`) end to end: HTTP deliveries, BullMQ, real handlers. */
describe('queued processing on BullMQ', () => {
  const closers: Array<() => Promise<void>> = [];
  const queueNames: string[] = [];
  const prefixes: string[] = [];
  let redis: Redis;

  function queueOptions(overrides: Partial<PaymentsQueueOptions> = {}): PaymentsQueueOptions {
    const name = overrides.name ?? uniqueQueueName('queued');
    if (!queueNames.includes(name)) queueNames.push(name);
    return { connection: { url: REDIS_URL }, backoff: { type: 'fixed', delay: 20 }, ...overrides, name };
  }

  function sharedStore(prefix: string): RedisIdempotencyStore {
    const client = createRedis();
    closers.push(() => quitAll(client));
    return new RedisIdempotencyStore(client, { keyPrefix: prefix });
  }

  async function app(
    instance: string,
    script: HandlerScript,
    queue: PaymentsQueueOptions,
    prefix = uniquePrefix('queued'),
  ): Promise<RedisWebhookApp> {
    prefixes.push(prefix);
    const started = await startRedisWebhookApp({ instance, script, store: sharedStore(prefix), processing: { queue } });
    closers.push(started.close);
    return started;
  }

  async function jobState(name: string, jobId: string): Promise<string> {
    const inspector = new Queue(name, { connection: { url: REDIS_URL } });
    try {
      return await inspector.getJobState(jobId);
    } finally {
      await inspector.close();
    }
  }

  async function jobCount(name: string): Promise<number> {
    const inspector = new Queue(name, { connection: { url: REDIS_URL } });
    try {
      const counts = await inspector.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized');
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    } finally {
      await inspector.close();
    }
  }

  beforeAll(() => {
    redis = createRedis();
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    for (const name of queueNames.splice(0)) {
      const cleaner = new Queue(name, { connection: { url: REDIS_URL } });
      await cleaner.obliterate({ force: true });
      await cleaner.close();
    }
    for (const prefix of prefixes.splice(0)) await deleteKeys(redis, prefix);
  });

  afterAll(async () => {
    await quitAll(redis);
  });

  it('[W3] answers 200 enqueued without waiting for a slow handler, which then runs in the worker', async () => {
    const script = new HandlerScript();
    let finish!: () => void;
    const slowWork = new Promise<void>((resolve) => (finish = resolve));
    script.behaviour = () => slowWork;
    const queue = queueOptions();
    const { webhookUrl } = await app('A', script, queue);
    const event = createPaymentEvent('payment_intent.succeeded');

    // The handler cannot finish before `finish()`, which is only called after the answer.
    expect(await deliver(webhookUrl, signedDelivery(event))).toEqual({
      status: 200,
      body: { received: true, outcome: 'enqueued' },
    });
    await waitFor(() => (script.runsOf(event.id).length === 1 ? true : undefined), {
      what: 'the worker to start the handler',
    });
    expect(await jobState(queue.name!, event.id)).toBe('active');
    finish();
    await waitFor(async () => ((await jobState(queue.name!, event.id)) === 'completed' ? true : undefined), {
      what: 'the job to complete',
    });
  });

  it('[W4] enqueues each event once and runs its handler once when every delivery reaches three instances at once', async () => {
    const script = new HandlerScript();
    const queue = queueOptions();
    const prefix = uniquePrefix('queued');
    const instances = [
      await app('A', script, queue, prefix),
      await app('B', script, queue, prefix),
      await app('C', script, queue, prefix),
    ];
    const events = Array.from({ length: 10 }, () => createPaymentEvent('payment_intent.succeeded'));

    const answers = await Promise.all(
      events.flatMap((event) => instances.map((i) => deliver(i.webhookUrl, signedDelivery(event)))),
    );
    expect(
      answers.every((a) => a.status === 200 && (a.body.outcome === 'enqueued' || a.body.outcome === 'duplicate')),
    ).toBe(true);
    await waitFor(
      async () =>
        (await Promise.all(events.map((e) => jobState(queue.name!, e.id)))).every((s) => s === 'completed') ||
        undefined,
      { what: 'every job to complete' },
    );
    // A redelivery after completion is answered duplicate and enqueues nothing.
    expect((await deliver(instances[1]!.webhookUrl, signedDelivery(events[0]!))).body.outcome).toBe('duplicate');
    expect(await jobCount(queue.name!)).toBe(10);
    for (const event of events) expect(script.runsOf(event.id)).toHaveLength(1);
  });

  it('[W4] retries a failing handler in the worker, with backoff, until it succeeds', async () => {
    const script = new HandlerScript();
    script.behaviour = (run) => {
      if (run.deliveryAttempt < 3) throw new Error('ledger service unavailable');
    };
    const queue = queueOptions({ attempts: 5 });
    const { webhookUrl } = await app('A', script, queue);
    const event = createPaymentEvent('payment_intent.succeeded');

    expect((await deliver(webhookUrl, signedDelivery(event))).status).toBe(200);
    await waitFor(async () => ((await jobState(queue.name!, event.id)) === 'completed' ? true : undefined), {
      what: 'the job to complete',
    });
    expect(script.runsOf(event.id).map((run) => run.deliveryAttempt)).toEqual([1, 2, 3]);
  });

  it('keeps an event that failed every attempt in the failed set, lists it, and replays it', async () => {
    const script = new HandlerScript();
    let healthy = false;
    script.behaviour = () => {
      if (!healthy) throw new Error('fulfilment backend down');
    };
    const queue = queueOptions({ attempts: 2 });
    const instance = await app('A', script, queue);
    const events = instance.app.get(PaymentEventsQueue);
    const event = createPaymentEvent('payment_intent.succeeded');

    await deliver(instance.webhookUrl, signedDelivery(event));
    const failed = await waitFor(
      async () => {
        const list = await events.failed();
        return list.length === 1 ? list : undefined;
      },
      { what: 'the job to land in the failed set' },
    );
    expect(failed[0]).toMatchObject({ eventId: event.id, type: 'payment_intent.succeeded', attemptsMade: 2 });
    expect(failed[0]!.failedReason).toContain('FulfilmentHandler.fulfil=failed');
    expect(failed[0]!.failedReason).not.toContain('fulfilment backend down');
    // A redelivery of a failed event does not make a second job.
    expect((await deliver(instance.webhookUrl, signedDelivery(event))).body.outcome).toBe('duplicate');

    healthy = true;
    expect(await events.replay(event.id)).toBe(true);
    await waitFor(async () => ((await jobState(queue.name!, event.id)) === 'completed' ? true : undefined), {
      what: 'the replay to complete',
    });
    expect(script.runsOf(event.id)).toHaveLength(3);
    expect(await events.failed()).toEqual([]);
  });

  it("answers 503 and runs nothing when the queue's Redis is unreachable", async () => {
    const script = new HandlerScript();
    const port = await deadPort();
    const queue = queueOptions({
      connection: { host: '127.0.0.1', port, retryStrategy: () => 1000, disconnectTimeout: 10 },
      enqueueTimeoutMs: 500,
      worker: false,
    });
    queueNames.pop(); // nothing to clean on a Redis that does not exist
    const { webhookUrl } = await app('A', script, queue);
    const answer = await deliver(webhookUrl, signedDelivery(createPaymentEvent('payment_intent.succeeded')));
    expect(answer).toEqual({ status: 503, body: { received: true, outcome: 'queue_unavailable' } });
    expect(script.runs).toEqual([]);
  });

  it('lets the running job finish before the app closes (graceful shutdown)', async () => {
    const script = new HandlerScript();
    let finish!: () => void;
    const work = new Promise<void>((resolve) => (finish = resolve));
    script.behaviour = () => work;
    const queue = queueOptions();
    const instance = await app('A', script, queue);
    const event = createPaymentEvent('payment_intent.succeeded');
    await deliver(instance.webhookUrl, signedDelivery(event));
    await waitFor(() => (script.runsOf(event.id).length === 1 ? true : undefined), { what: 'the handler to start' });

    const closing = instance.close();
    finish();
    await closing;
    expect(await jobState(queue.name!, event.id)).toBe('completed');
  });

  it('runs the handlers of a job that was waiting in Redis before the worker app booted', async () => {
    const queue = queueOptions();
    const prefix = uniquePrefix('queued');
    const receiverScript = new HandlerScript();
    const receiver = await app('R', receiverScript, { ...queue, worker: false }, prefix);
    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await deliver(receiver.webhookUrl, signedDelivery(event))).body.outcome).toBe('enqueued');
    expect(await jobState(queue.name!, event.id)).toBe('waiting');

    const script = new HandlerScript();
    const worker = await startRedisWorkerContext({
      instance: 'W',
      script,
      store: sharedStore(prefix),
      processing: { queue },
    });
    closers.push(() => worker.close());
    await waitFor(async () => ((await jobState(queue.name!, event.id)) === 'completed' ? true : undefined), {
      what: 'the job to complete',
    });
    expect(script.runsOf(event.id)).toEqual([{ instance: 'W', eventId: event.id, deliveryAttempt: 1 }]);
    expect(receiverScript.runs).toEqual([]);
  });

  it('[W4] hands the job of a worker process killed mid-job to another worker, which completes it', async () => {
    const queue = queueOptions({
      lockDurationMs: 1000,
      stalledIntervalMs: 300,
      attempts: 50,
      backoff: { type: 'fixed', delay: 200 },
    });
    const prefix = uniquePrefix('killed');
    prefixes.push(prefix);

    // Instance P only receives and enqueues; the worker is a separate process.
    const producerScript = new HandlerScript();
    const producer = await app('P', producerScript, { ...queue, worker: false }, prefix);
    const child = spawnWorker({
      QUEUE_NAME: queue.name!,
      KEY_PREFIX: prefix,
      LOCK_MS: '1000',
      STALLED_MS: '300',
      CLAIM_TTL_SECONDS: '1',
    });
    closers.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    await child.ready;

    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await deliver(producer.webhookUrl, signedDelivery(event))).body.outcome).toBe('enqueued');
    await waitFor(async () => ((await redis.get(`${prefix}child-started:${event.id}`)) !== null ? true : undefined), {
      what: 'the child worker to start the handler',
    });
    child.process.kill('SIGKILL');
    await child.exited;
    expect(await jobState(queue.name!, event.id)).toBe('active');

    // Another worker: finds the stalled job once the dead worker's lock lapses, and completes it.
    const script = new HandlerScript();
    const worker: INestApplicationContext = await startRedisWorkerContext({
      instance: 'W',
      script,
      store: sharedStore(prefix),
      processing: { queue },
    });
    closers.push(() => worker.close());
    await waitFor(async () => ((await jobState(queue.name!, event.id)) === 'completed' ? true : undefined), {
      what: 'the surviving worker to complete the job',
      // With BullMQ's defaults (30 s lock, 30 s stalled checks) this would take 30-60 s: the options are in use.
      timeoutMs: 25_000,
    });
    expect(script.runsOf(event.id)).toHaveLength(1);
    expect(producerScript.runs).toEqual([]);
  });
});

interface SpawnedWorker {
  process: ChildProcess;
  ready: Promise<void>;
  exited: Promise<void>;
  kill(signal: NodeJS.Signals): void;
  exitCode: number | null;
  signalCode: NodeJS.Signals | null;
}

/** Starts test/fixtures/redis/queue-worker.child.ts in its own node process. */
function spawnWorker(env: Record<string, string>): SpawnedWorker {
  const root = fileURLToPath(new URL('../../../../', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', './test/fixtures/redis/register-ts.mjs', './test/fixtures/redis/queue-worker.child.ts'],
    { cwd: root, env: { ...process.env, REDIS_URL, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`worker child exited (${code ?? signal}) before ready: ${stderr}`)),
    );
  });
  return {
    process: child,
    ready,
    exited,
    kill: (signal) => child.kill(signal),
    get exitCode() {
      return child.exitCode;
    },
    get signalCode() {
      return child.signalCode;
    },
  };
}
