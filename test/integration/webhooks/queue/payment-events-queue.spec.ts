import type { ResolvedWebhooksOptions } from '../../../../lib/webhooks/contracts/payments-webhooks.options.js';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { PaymentsConfigurationError } from '../../../../lib/errors/payments.errors.js';
import type { PaymentsQueueOptions } from '../../../../lib/payments-options.interface.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { createPaymentEvent } from '../../../../lib/testing/create-payment-event.js';
import type { PaymentEvent } from '../../../../lib/webhooks/contracts/payment-event.types.js';
import type {
  DispatchResult,
  PaymentEventsDispatcher,
} from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { PaymentEventsQueue } from '../../../../lib/webhooks/queue/payment-events.queue.js';
import { PaymentEventsEnqueuer } from '../../../../lib/webhooks/queue/payment-events.enqueuer.js';
import { PaymentEventsWorker } from '../../../../lib/webhooks/queue/payment-events.worker.js';
import { REDIS_URL, createRedis, deadPort, quitAll, uniqueQueueName, waitFor } from '../../redis-test.util.js';

/**
 * The queue (producer, failed set, replay) and its worker, two providers as in the module's queue
 * part, on a real Redis, with a scripted dispatcher standing in for the handlers (the suites with whole
 * Nest apps use the real one).
 */

type Dispatch = (event: PaymentEvent, meta: { receivedAt: Date; deliveryAttempt?: number }) => Promise<DispatchResult>;

interface Recorded {
  eventId: string;
  deliveryAttempt: number | undefined;
  receivedAt: Date;
}

const handled: DispatchResult = { outcome: 'handled', handlers: [{ handler: 'Orders.onEvent', status: 'done' }] };
const failedOnce: DispatchResult = { outcome: 'failed', handlers: [{ handler: 'Orders.onEvent', status: 'failed' }] };

const verifier = { verify: () => ({ valid: true as const }) };

function resolvedOptions(queue: PaymentsQueueOptions) {
  return validatePaymentsOptions({
    apiKey: 'sk_test_queue_suite',
    environment: 'sandbox',
    baseUrl: 'https://sandbox.example.test',
    webhooks: { verifier, processing: { queue } },
  });
}

function scriptedDispatcher(script: Dispatch): { dispatcher: PaymentEventsDispatcher; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const dispatcher = {
    dispatch: async (event: PaymentEvent, meta: { receivedAt: Date; deliveryAttempt?: number }) => {
      calls.push({ eventId: event.id, deliveryAttempt: meta.deliveryAttempt, receivedAt: meta.receivedAt });
      return script(event, meta);
    },
  } as unknown as PaymentEventsDispatcher;
  return { dispatcher, calls };
}

describe('PaymentEventsQueue on real Redis', () => {
  const started: Array<PaymentEventsQueue | PaymentEventsWorker> = [];
  const clients: Redis[] = [];
  const queueNames: string[] = [];

  async function startQueue(options: Partial<PaymentsQueueOptions>, script: Dispatch = async () => handled) {
    const name = options.name ?? uniqueQueueName('q');
    queueNames.push(name);
    const { dispatcher, calls } = scriptedDispatcher(script);
    const webhooks = resolvedOptions({
      connection: { url: REDIS_URL },
      backoff: { type: 'fixed', delay: 10 },
      ...options,
      name,
    }).webhooks as ResolvedWebhooksOptions;
    const worker = new PaymentEventsWorker(webhooks, dispatcher);
    const queue = new PaymentEventsQueue(webhooks, worker);
    // Shutdown order as in Nest: the worker stops (beforeApplicationShutdown) before the producer closes.
    started.push(worker, queue);
    // Lifecycle order as in Nest: the producer opens on module init, the worker starts on bootstrap.
    await queue.onModuleInit();
    await worker.onApplicationBootstrap();
    return { queue, worker, calls, name, processor: new PaymentEventsEnqueuer(queue) };
  }

  async function jobCounts(name: string) {
    const inspector = new Queue(name, { connection: { url: REDIS_URL } });
    try {
      return await inspector.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed');
    } finally {
      await inspector.close();
    }
  }

  afterEach(async () => {
    for (const part of started.splice(0)) await part.onApplicationShutdown();
    for (const name of queueNames.splice(0)) {
      const cleaner = new Queue(name, { connection: { url: REDIS_URL } });
      await cleaner.obliterate({ force: true });
      await cleaner.close();
    }
    await quitAll(...clients.splice(0));
  });

  it('[W3] answers 200 enqueued once Redis holds a job whose id is the event id', async () => {
    const { processor, name } = await startQueue({ worker: false });
    const event = createPaymentEvent('payment_intent.succeeded');
    await expect(processor.process(event, new Date())).resolves.toEqual({ status: 200, outcome: 'enqueued' });
    const inspector = new Queue(name, { connection: { url: REDIS_URL } });
    try {
      const job = await inspector.getJob(event.id);
      expect(job?.name).toBe('payment_intent.succeeded');
      expect(job?.data).toMatchObject({ event: { id: event.id } });
    } finally {
      await inspector.close();
    }
  });

  it('[W3] runs the handlers in the worker, after the answer, with the time the delivery was received', async () => {
    const { processor, calls } = await startQueue({});
    const event = createPaymentEvent('payment_intent.succeeded');
    const receivedAt = new Date('2026-01-02T03:04:05.678Z');
    await processor.process(event, receivedAt);
    await waitFor(() => (calls.length > 0 ? true : undefined), { what: 'the worker to dispatch' });
    expect(calls[0]).toEqual({ eventId: event.id, deliveryAttempt: 1, receivedAt });
  });

  it('[W4] enqueues a redelivered event once: the second delivery answers 200 duplicate', async () => {
    const { processor, name } = await startQueue({ worker: false });
    const event = createPaymentEvent('payment_intent.succeeded');
    expect(await processor.process(event, new Date())).toEqual({ status: 200, outcome: 'enqueued' });
    expect(await processor.process(event, new Date())).toEqual({ status: 200, outcome: 'duplicate' });
    expect((await jobCounts(name)).waiting).toBe(1);
  });

  it('[W4] keeps one job and one dispatch when 20 deliveries of one event arrive at once', async () => {
    const { processor, calls, queue } = await startQueue({});
    const event = createPaymentEvent('payment_intent.succeeded');
    const answers = await Promise.all(Array.from({ length: 20 }, () => processor.process(event, new Date())));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await waitFor(() => (calls.length > 0 ? true : undefined), { what: 'the worker to dispatch' });
    // A delivery after completion is still a duplicate while the completed job is retained.
    expect(await processor.process(event, new Date())).toEqual({ status: 200, outcome: 'duplicate' });
    expect(await queue.failedCount()).toBe(0);
    expect(calls).toHaveLength(1);
  });

  it('[W4] retries a failing handler with backoff until it succeeds, counting the attempts', async () => {
    let runs = 0;
    const { processor, calls, name } = await startQueue({ attempts: 5 }, async () =>
      ++runs < 3 ? failedOnce : handled,
    );
    const event = createPaymentEvent('payment_intent.succeeded');
    await processor.process(event, new Date());
    await waitFor(async () => ((await jobCounts(name)).completed === 1 ? true : undefined), {
      what: 'the job to complete',
    });
    expect(calls.map((c) => c.deliveryAttempt)).toEqual([1, 2, 3]);
  });

  it.each(['busy', 'store_unavailable'] as const)(
    'retries the job when the dispatch outcome is %s',
    async (outcome) => {
      let runs = 0;
      const { processor, calls, name } = await startQueue({ attempts: 3 }, async () =>
        ++runs === 1 ? { outcome, handlers: [{ handler: 'Orders.onEvent', status: outcome }] } : handled,
      );
      await processor.process(createPaymentEvent('payment_intent.succeeded'), new Date());
      await waitFor(async () => ((await jobCounts(name)).completed === 1 ? true : undefined), {
        what: 'the job to complete',
      });
      expect(calls).toHaveLength(2);
    },
  );

  it.each(['duplicate', 'unhandled'] as const)(
    'completes the job without retry when the outcome is %s',
    async (outcome) => {
      const { processor, calls, name } = await startQueue({ attempts: 3 }, async () => ({ outcome, handlers: [] }));
      await processor.process(createPaymentEvent('payment_intent.succeeded'), new Date());
      await waitFor(async () => ((await jobCounts(name)).completed === 1 ? true : undefined), {
        what: 'the job to complete',
      });
      expect(calls).toHaveLength(1);
    },
  );

  it('keeps an event whose handler fails on every attempt in the failed set, with the reason', async () => {
    const { processor, queue } = await startQueue({ attempts: 2 }, async () => failedOnce);
    const event = createPaymentEvent('setup_intent.failed');
    await processor.process(event, new Date());
    const [failed] = await waitFor(
      async () => {
        const list = await queue.failed();
        return list.length > 0 ? list : undefined;
      },
      { what: 'the job to fail' },
    );
    expect(failed).toMatchObject({ eventId: event.id, type: 'setup_intent.failed', attemptsMade: 2 });
    expect(failed!.failedReason).toBe(`payment event ${event.id}: failed (Orders.onEvent=failed)`);
    expect(failed!.failedAt).toBeInstanceOf(Date);
    expect(await queue.failedCount()).toBe(1);
  });

  it('replays a failed event with a fresh set of attempts, and it completes', async () => {
    let healthy = false;
    const { processor, queue, calls, name } = await startQueue({ attempts: 2 }, async () =>
      healthy ? handled : failedOnce,
    );
    const event = createPaymentEvent('payment_intent.succeeded');
    await processor.process(event, new Date());
    await waitFor(async () => ((await queue.failedCount()) === 1 ? true : undefined), { what: 'the job to fail' });
    healthy = true;
    expect(await queue.replay(event.id)).toBe(true);
    await waitFor(async () => ((await jobCounts(name)).completed === 1 ? true : undefined), {
      what: 'the replay to complete',
    });
    expect(calls.map((c) => c.deliveryAttempt)).toEqual([1, 2, 1]);
    expect(await queue.failed()).toEqual([]);
  });

  it('answers false to a replay of an event that is not in the failed set', async () => {
    const { queue, processor } = await startQueue({ worker: false });
    expect(await queue.replay(createPaymentEvent('payment_intent.succeeded').id)).toBe(false);
    const waiting = createPaymentEvent('payment_intent.succeeded');
    await processor.process(waiting, new Date());
    expect(await queue.replay(waiting.id)).toBe(false);
  });

  it('lists the failed set a page at a time', async () => {
    const { processor, queue } = await startQueue({ attempts: 1 }, async () => failedOnce);
    const events = Array.from({ length: 3 }, () => createPaymentEvent('payment_intent.succeeded'));
    for (const event of events) await processor.process(event, new Date());
    await waitFor(async () => ((await queue.failedCount()) === 3 ? true : undefined), { what: 'three jobs to fail' });
    const firstPage = await queue.failed(0, 1);
    const secondPage = await queue.failed(2, 3);
    expect(firstPage).toHaveLength(2);
    expect(secondPage).toHaveLength(1);
    expect([...firstPage, ...secondPage].map((f) => f.eventId).sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('does not dispatch in an instance with worker: false', async () => {
    const { processor, calls, name } = await startQueue({ worker: false });
    await processor.process(createPaymentEvent('payment_intent.succeeded'), new Date());
    expect((await jobCounts(name)).waiting).toBe(1);
    expect(calls).toHaveLength(0);
  });

  it('answers 503 quickly when Redis is unreachable, instead of waiting for it', async () => {
    const port = await deadPort();
    const { processor } = await startQueue({
      connection: { host: '127.0.0.1', port, retryStrategy: () => 1000, disconnectTimeout: 10 },
      worker: false,
      enqueueTimeoutMs: 300,
    });
    await expect(processor.process(createPaymentEvent('payment_intent.succeeded'), new Date())).resolves.toEqual({
      status: 503,
      outcome: 'queue_unavailable',
    });
  });

  it('answers 503 when Redis goes away after the queue started (the producer does not queue commands offline)', async () => {
    // disconnectTimeout (inherited by the module's duplicates): ioredis otherwise keeps a 2 s timer after stopping a dropped socket.
    const user = createRedis({ disconnectTimeout: 10 });
    clients.push(user);
    const { processor, queue } = await startQueue({ connection: user, worker: false, enqueueTimeoutMs: 10_000 });
    await processor.process(createPaymentEvent('payment_intent.succeeded'), new Date());
    // Cut the module's producer connection (the user's client is not touched) and keep it down.
    const producer = (queue as unknown as { owned: Redis[] }).owned[0]!;
    producer.options.retryStrategy = () => 60_000;
    producer.disconnect(true);
    await waitFor(() => (producer.status !== 'ready' ? true : undefined), { what: 'the producer to drop' });
    const started = Date.now();
    await expect(processor.process(createPaymentEvent('payment_intent.succeeded'), new Date())).resolves.toEqual({
      status: 503,
      outcome: 'queue_unavailable',
    });
    // Fails on the spot, well before enqueueTimeoutMs: no command waits in an offline queue.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('closes the clients it created on shutdown, never the client the app passed', async () => {
    const user = createRedis();
    clients.push(user);
    const { queue, worker, processor } = await startQueue({ connection: user });
    await processor.process(createPaymentEvent('payment_intent.succeeded'), new Date());
    // One duplicate for the producer, one for the worker (each part owns and closes its own).
    const owned = [
      ...(queue as unknown as { owned: Redis[] }).owned,
      ...(worker as unknown as { owned: Redis[] }).owned,
    ];
    expect(owned).toHaveLength(2);
    expect(new Set(owned).size).toBe(2);
    await worker.onApplicationShutdown();
    await queue.onApplicationShutdown();
    await waitFor(() => (owned.every((c) => c.status === 'end') ? true : undefined), {
      what: 'the created clients to close',
    });
    expect(user.status).toBe('ready');
    expect(await user.ping()).toBe('PONG');
  });

  it.each([
    ['ioredis options', () => ({ url: REDIS_URL, keyPrefix: 'app:' })],
    [
      'an ioredis client',
      () => {
        const client = createRedis({ keyPrefix: 'app:' });
        clients.push(client);
        return client;
      },
    ],
  ])('fails at boot with a PaymentsConfigurationError when %s set a keyPrefix', async (_label, connection) => {
    await expect(startQueue({ connection: connection() })).rejects.toThrow(
      expect.objectContaining({ name: 'PaymentsConfigurationError', option: 'webhooks.processing.queue.connection' }),
    );
  });

  it('rejects inspection with a PaymentsConfigurationError in inline mode', async () => {
    const inline = new PaymentEventsQueue(
      validatePaymentsOptions({
        apiKey: 'sk_test_x',
        environment: 'sandbox',
        baseUrl: 'https://sandbox.example.test',
        webhooks: { verifier },
      }).webhooks as ResolvedWebhooksOptions,
    );
    await inline.onModuleInit();
    expect(inline.enabled).toBe(false);
    await expect(inline.failed()).rejects.toThrow(PaymentsConfigurationError);
    await expect(inline.replay('x')).rejects.toThrow(PaymentsConfigurationError);
  });

  describe('queue options', () => {
    it('fills the defaults of the worker and enqueue settings', () => {
      const options = resolvedOptions({ connection: { url: REDIS_URL } });
      const processing = options.webhooks && options.webhooks.processing;
      expect(processing).toEqual({
        queue: {
          connection: { url: REDIS_URL },
          name: 'payments-webhooks',
          prefix: 'bull',
          attempts: 10,
          backoff: { type: 'exponential', delay: 1000 },
          concurrency: 1,
          worker: true,
          enqueueTimeoutMs: 5000,
          lockDurationMs: 30_000,
          stalledIntervalMs: 30_000,
        },
      });
    });

    it.each(['enqueueTimeoutMs', 'lockDurationMs', 'stalledIntervalMs'] as const)(
      'refuses %s: 0 at boot, naming the option',
      (option) => {
        expect(() => resolvedOptions({ connection: { url: REDIS_URL }, [option]: 0 })).toThrow(
          expect.objectContaining({
            name: 'PaymentsConfigurationError',
            option: `webhooks.processing.queue.${option}`,
          }),
        );
      },
    );
  });
});
