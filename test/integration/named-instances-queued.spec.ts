import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  OnPaymentEvent,
  PaymentEventsQueue,
  PaymentsModule,
  RedisIdempotencyStore,
  standardWebhooksVerifier,
  type PaymentEvent,
} from '../../lib/index.js';
import { getPaymentEventsQueueToken } from '../../lib/webhooks/index.js';
import { createPaymentEvent, signWebhook } from '../../lib/testing/index.js';
import { CapturingLogger } from '../fixtures/webhooks/capturing.logger.js';
import { post } from '../fixtures/webhooks/webhook-app.fixture.js';
import {
  REDIS_URL,
  createRedis,
  deleteKeys,
  quitAll,
  uniquePrefix,
  uniqueQueueName,
  waitFor,
} from './redis-test.util.js';

// Two queued instances in one app, on one Redis and one shared RedisIdempotencyStore: each has its
// own route, secret, BullMQ queue and worker, and its worker runs its own handlers only.
const SECRET = `whsec_${Buffer.from('queued-default-secret-32-bytes!!').toString('base64')}`;
const EU_SECRET = `whsec_${Buffer.from('queued-eu-endpoint-secret-32byte').toString('base64')}`;

@Injectable()
class QueuedHandlers {
  readonly runs: Array<{ instance: 'default' | 'eu'; eventId: string }> = [];

  @OnPaymentEvent('payment_intent.succeeded')
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    this.runs.push({ instance: 'default', eventId: event.id });
  }

  @OnPaymentEvent('payment_intent.succeeded', { instance: 'eu' })
  paidInEurope(event: PaymentEvent<'payment_intent.succeeded'>): void {
    this.runs.push({ instance: 'eu', eventId: event.id });
  }

  runsOf(eventId: string): string[] {
    return this.runs.filter((run) => run.eventId === eventId).map((run) => run.instance);
  }
}

describe('two named instances, each with its own BullMQ queue and worker, on real Redis', () => {
  const prefix = uniquePrefix('named-queued');
  const queueName = uniqueQueueName('default');
  const euQueueName = uniqueQueueName('eu');
  let storeClient: Redis;
  let app: INestApplication;
  let base: string;
  let handlers: QueuedHandlers;

  beforeAll(async () => {
    storeClient = createRedis();
    const store = new RedisIdempotencyStore(storeClient, { keyPrefix: prefix });
    const queue = (name: string) => ({
      connection: { url: REDIS_URL },
      name,
      backoff: { type: 'fixed' as const, delay: 10 },
    });

    @Module({
      imports: [
        PaymentsModule.forRoot({
          apiKey: 'sk_test_queued_default',
          environment: 'sandbox',
          baseUrl: 'https://sandbox.payments.test',
          webhooks: {
            verifier: standardWebhooksVerifier({ secrets: SECRET }),
            store,
            processing: { queue: queue(queueName) },
          },
        }),
        PaymentsModule.forRootAsync({
          name: 'eu',
          receiver: { path: 'payments/eu', processing: 'queue' },
          useFactory: () => ({
            apiKey: 'sk_test_queued_eu',
            environment: 'sandbox' as const,
            baseUrl: 'https://sandbox.payments.test',
            webhooks: {
              path: 'payments/eu',
              verifier: standardWebhooksVerifier({ secrets: EU_SECRET }),
              store,
              processing: { queue: queue(euQueueName) },
            },
          }),
        }),
      ],
      providers: [QueuedHandlers],
    })
    class QueuedAccountsModule {}

    app = await NestFactory.create(QueuedAccountsModule, {
      rawBody: true,
      logger: new CapturingLogger(),
      abortOnError: false,
    });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    handlers = app.get(QueuedHandlers);
  });

  afterAll(async () => {
    await app?.close();
    for (const name of [queueName, euQueueName]) {
      const cleaner = new Queue(name, { connection: { url: REDIS_URL } });
      await cleaner.obliterate({ force: true });
      await cleaner.close();
    }
    if (storeClient) {
      await deleteKeys(storeClient, prefix);
      await quitAll(storeClient);
    }
  });

  it('[W3][W4] the same event id on both routes becomes one job in each queue, run once by each instance’s own handler', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const sign = (secret: string) => signWebhook(event, { scheme: 'standard-webhooks', secret });
    expect((await post(`${base}/payments/webhooks`, sign(SECRET))).body).toEqual({
      received: true,
      outcome: 'enqueued',
    });
    expect((await post(`${base}/payments/eu`, sign(EU_SECRET))).body).toEqual({ received: true, outcome: 'enqueued' });
    await waitFor(() => (handlers.runsOf(event.id).length === 2 ? true : undefined), { what: 'both workers to run' });
    expect(handlers.runsOf(event.id).sort()).toEqual(['default', 'eu']);

    // A redelivery on either route is that queue's duplicate, and runs nothing more.
    expect((await post(`${base}/payments/eu`, sign(EU_SECRET))).body).toEqual({ received: true, outcome: 'duplicate' });
    expect((await post(`${base}/payments/webhooks`, sign(SECRET))).body).toEqual({
      received: true,
      outcome: 'duplicate',
    });
    expect(handlers.runsOf(event.id).sort()).toEqual(['default', 'eu']);
  });

  it('exports each instance’s queue under its own token, on its own BullMQ queue', () => {
    const direct = app.get(getPaymentEventsQueueToken());
    const eu = app.get<PaymentEventsQueue>(getPaymentEventsQueueToken('eu'));
    expect(eu).toBeInstanceOf(PaymentEventsQueue);
    expect(eu.name).toBe(euQueueName);
    expect(eu).not.toBe(direct);
    expect(app.get(PaymentEventsQueue)).toBe(direct);
    expect(direct.name).toBe(queueName);
  });

  it('keeps the two instances’ records apart in the shared store (the named one under its prefix)', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    await post(`${base}/payments/eu`, signWebhook(event, { scheme: 'standard-webhooks', secret: EU_SECRET }));
    await waitFor(() => (handlers.runsOf(event.id).length === 1 ? true : undefined), { what: 'the eu worker to run' });
    const keys = await storeClient.keys(`${prefix}*${event.data.payment_intent!.id}*`);
    expect(keys).toEqual([`${prefix}{eu:i:${event.data.payment_intent!.id}}`]);
  });
});
