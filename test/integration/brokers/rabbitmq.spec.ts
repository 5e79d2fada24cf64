import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger, Module, type DynamicModule, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import amqp, { type ChannelModel, type ConfirmChannel, type GetMessage } from 'amqplib';
import {
  MemoryIdempotencyStore,
  OnPaymentEvent,
  PaymentsModule,
  type PaymentDeliveryListener,
  type PaymentEvent,
} from '../../../lib/index.js';
import {
  createPaymentsRabbitMqServer,
  PaymentsRabbitMqModule,
  rabbitMqPublisher,
  replayRabbitMqDeadLetters,
  type PaymentsRabbitMqOptions,
} from '../../../lib/brokers/rabbitmq/index.js';
import { createPaymentsForwarder } from '../../../lib/serverless/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions, sign } from '../../fixtures/webhooks/webhook-app.fixture.js';
import { eventually } from './broker-test.util.js';

const URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
/** Own queues per run (`<queue>`, `.retry`, `.dead`), deleted afterwards. */
const RUN = `nestjs-payments-test-${process.pid}-${Date.now()}`;

/** What the handlers saw, and how the test wants them to behave. */
class Ledger {
  readonly runs: string[] = [];
  /** Event ids whose handler throws, and how many more times. */
  readonly failures = new Map<string, number>();
}

@Injectable()
class Fulfilment {
  constructor(private readonly ledger: Ledger) {}

  @OnPaymentEvent('payment_intent.succeeded')
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    const left = this.ledger.failures.get(event.id) ?? 0;
    if (left > 0) {
      this.ledger.failures.set(event.id, left - 1);
      throw new Error('fulfilment is down');
    }
    this.ledger.runs.push(event.id);
  }
}

interface ConsumerApp {
  app: INestMicroservice;
  ledger: Ledger;
}

let queueSeq = 0;
const logger = new CapturingLogger();
let connection: ChannelModel;
let channel: ConfirmChannel;
const queues: string[] = [];
const apps: INestMicroservice[] = [];

async function startConsumer(
  options: PaymentsRabbitMqOptions,
  extra: {
    store?: MemoryIdempotencyStore;
    ledger?: Ledger;
    listener?: PaymentDeliveryListener;
    maxBodyBytes?: number;
  } = {},
): Promise<ConsumerApp> {
  const ledger = extra.ledger ?? new Ledger();
  @Module({
    imports: [
      PaymentsModule.forRoot(
        fixtureOptions({
          store: extra.store,
          deliveryListener: extra.listener,
          ...(extra.maxBodyBytes ? { maxBodyBytes: extra.maxBodyBytes } : {}),
        }),
      ),
      PaymentsRabbitMqModule.register(options) as unknown as DynamicModule,
    ],
    providers: [{ provide: Ledger, useValue: ledger }, Fulfilment],
  })
  class ConsumerModule {}
  const app = await NestFactory.createMicroservice(ConsumerModule, {
    strategy: await createPaymentsRabbitMqServer(options),
    logger,
  });
  await app.listen();
  apps.push(app);
  return { app, ledger };
}

function newQueue(): PaymentsRabbitMqOptions {
  const queue = `${RUN}-${++queueSeq}`;
  queues.push(queue, `${queue}.retry`, `${queue}.dead`);
  return { urls: [URL], queue, prefetchCount: 8, retry: { delayMs: 150, maxAttempts: 3 } };
}

/** Publishes raw bytes and headers as the forwarder would (or as anyone who can publish). */
async function publish(queue: string, body: string | Buffer, headers: Record<string, string>): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    channel.sendToQueue(queue, Buffer.from(body), { headers, persistent: true }, (error: unknown) =>
      error ? reject(error as Error) : resolve(),
    ),
  );
}

async function depth(queue: string): Promise<{ ready: number; consumers: number }> {
  const { messageCount, consumerCount } = await channel.checkQueue(queue);
  return { ready: messageCount, consumers: consumerCount };
}

/** The messages parked in `<queue>.dead`, taken off it. */
async function parked(queue: string): Promise<GetMessage[]> {
  const out: GetMessage[] = [];
  for (;;) {
    const message = await channel.get(`${queue}.dead`, { noAck: true });
    if (message === false) return out;
    out.push(message);
  }
}

const paid = () => createPaymentEvent('payment_intent.succeeded');

beforeAll(async () => {
  Logger.overrideLogger(logger);
  connection = await amqp.connect(URL);
  channel = await connection.createConfirmChannel();
});

afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

afterAll(async () => {
  if (process.env.BROKER_TEST_LOGS) console.log(logger.text());
  for (const queue of queues) await channel.deleteQueue(queue).catch(() => undefined);
  await connection.close();
});

describe('RabbitMQ consumer (Nest transport, manual acknowledgement)', () => {
  it('[W4] runs the handler once per event, whatever the redeliveries, and acknowledges handled and duplicate messages', async () => {
    const options = newQueue();
    const { ledger } = await startConsumer(options);
    const event = paid();
    const signed = sign(event);

    await publish(options.queue, signed.rawBody, signed.headers);
    await publish(options.queue, signed.rawBody, signed.headers);
    await publish(options.queue, signed.rawBody, signed.headers);

    await eventually(async () => {
      expect(ledger.runs).toEqual([event.id]);
      expect((await depth(options.queue)).ready).toBe(0);
    });
    // Nothing waits unacknowledged: the channel's prefetch is free (a new message is handled too).
    const next = paid();
    const signedNext = sign(next);
    await publish(options.queue, signedNext.rawBody, signedNext.headers);
    await eventually(() => expect(ledger.runs).toEqual([event.id, next.id]));
    expect(await parked(options.queue)).toEqual([]);
  });

  it('[W1][W5] never runs a handler for a forged, malformed, oversized or unsigned message: each is parked with its reason, never retried', async () => {
    const options = newQueue();
    const { ledger } = await startConsumer(options, { maxBodyBytes: 4096 });
    logger.clear();
    const forged = sign(paid(), {
      secret: `whsec_${Buffer.from('not-the-endpoint-secret-32-bytes').toString('base64')}`,
    });
    const notJson = sign('this is not json');
    const big = sign(JSON.stringify({ ...paid(), padding: 'x'.repeat(8000) }));
    const unsigned = sign(paid());

    await publish(options.queue, forged.rawBody, forged.headers);
    await publish(options.queue, notJson.rawBody, notJson.headers);
    await publish(options.queue, big.rawBody, big.headers);
    await publish(options.queue, unsigned.rawBody, { 'content-type': 'application/json' });

    const dead: GetMessage[] = [];
    await eventually(async () => {
      dead.push(...(await parked(options.queue)));
      expect(dead).toHaveLength(4);
    });
    const reasons = dead.map((m) => ({
      reason: m.properties.headers?.['x-payments-reason'],
      status: m.properties.headers?.['x-payments-status'],
      attempts: m.properties.headers?.['x-payments-attempts'],
      missing: m.properties.headers?.['x-payments-missing-headers'],
    }));
    expect(reasons).toEqual(
      expect.arrayContaining([
        { reason: 'invalid_signature', status: 401, attempts: 1, missing: undefined },
        { reason: 'invalid_json', status: 400, attempts: 1, missing: undefined },
        { reason: 'payload_too_large', status: 413, attempts: 1, missing: undefined },
        // refused by name: the headers of the scheme that the message lacks
        {
          reason: 'invalid_signature',
          status: 401,
          attempts: 1,
          missing: 'webhook-id, webhook-timestamp, webhook-signature',
        },
      ]),
    );
    // The parked copy is the message as it came: its bytes and the service's headers, for an operator to read.
    expect(dead.some((m) => m.content.equals(Buffer.from(forged.rawBody)))).toBe(true);
    expect(ledger.runs).toEqual([]);
    expect((await depth(options.queue)).ready).toBe(0);
    expect((await depth(`${options.queue}.retry`)).ready).toBe(0);
    // Anyone who can publish can send these: warnings, sampled; never an error line.
    expect(logger.messages('error')).toEqual([]);
  });

  it('retries a failing handler later through the retry queue (a delay, not a requeue loop), then runs it once', async () => {
    const options = newQueue();
    const ledger = new Ledger();
    const deliveries: string[] = [];
    await startConsumer(options, { ledger, listener: { onDelivery: (record) => deliveries.push(record.outcome) } });
    const event = paid();
    ledger.failures.set(event.id, 2);
    const signed = sign(event);

    await publish(options.queue, signed.rawBody, signed.headers);

    await eventually(() => expect(ledger.runs).toEqual([event.id]));
    expect(deliveries).toEqual(['failed', 'failed', 'handled']);
    expect(await parked(options.queue)).toEqual([]);
    expect((await depth(options.queue)).ready).toBe(0);
  });

  it('parks a message after maxAttempts deliveries, and the replay of the dead-letter queue runs it once the cause is fixed', async () => {
    const options = newQueue();
    const ledger = new Ledger();
    const deliveries: string[] = [];
    await startConsumer(options, { ledger, listener: { onDelivery: (record) => deliveries.push(record.outcome) } });
    const event = paid();
    ledger.failures.set(event.id, 1_000);
    const signed = sign(event);

    await publish(options.queue, signed.rawBody, signed.headers);

    await eventually(async () => expect((await depth(`${options.queue}.dead`)).ready).toBe(1));
    expect(deliveries).toEqual(['failed', 'failed', 'failed']);
    const [message] = await (async () => {
      const got = await channel.get(`${options.queue}.dead`, { noAck: false });
      if (got === false) throw new Error('nothing parked');
      channel.nack(got, false, true);
      return [got];
    })();
    expect(message!.properties.headers).toMatchObject({
      'x-payments-reason': 'failed',
      'x-payments-status': 500,
      'x-payments-attempts': 3,
      'webhook-id': signed.headers['webhook-id'],
    });
    expect(message!.properties.headers?.['x-death']).toBeUndefined();

    ledger.failures.delete(event.id); // the fix is deployed
    const moved = await replayRabbitMqDeadLetters({ url: URL, queue: options.queue });

    expect(moved).toBe(1);
    await eventually(() => expect(ledger.runs).toEqual([event.id]));
    expect(deliveries).toEqual(['failed', 'failed', 'failed', 'handled']);
    expect((await depth(`${options.queue}.dead`)).ready).toBe(0);
  });

  it('[W4] loses nothing and runs nothing twice when the consumer dies between its handler and its acknowledgement', async () => {
    const options = newQueue();
    const store = new MemoryIdempotencyStore(); // the deployment's shared store (Redis, PostgreSQL) in production
    const ledger = new Ledger();
    const outcomes: string[] = [];
    const crashed: { app?: INestMicroservice } = {};
    const crashOnce: PaymentDeliveryListener = {
      onDelivery(record) {
        outcomes.push(record.outcome);
        // The handler ran and its claim completed; the acknowledgement has not been sent yet. The
        // consumer's channel dies now, as in a crash: the broker takes back what it had not acknowledged.
        if (outcomes.length === 1) void channelOf(crashed.app!).close();
      },
    };
    crashed.app = (await startConsumer(options, { store, ledger, listener: crashOnce })).app;
    const event = paid();
    const signed = sign(event);

    await publish(options.queue, signed.rawBody, signed.headers);
    await eventually(() => expect(outcomes).toEqual(['handled']));
    // Another consumer (same store) is up; the broker redelivers the unacknowledged message to one of them
    // (the first reconnects on its own).
    await startConsumer(options, { store, ledger, listener: { onDelivery: (r) => outcomes.push(r.outcome) } });

    await eventually(() => expect(outcomes).toEqual(['handled', 'duplicate']));
    expect(ledger.runs).toEqual([event.id]);
    // Acknowledged this time: with every consumer gone, nothing is back in the queue.
    while (apps.length > 0) await apps.pop()!.close();
    expect(await depth(options.queue)).toEqual({ ready: 0, consumers: 0 });
  });

  it('the forwarder publishes the bytes and headers unchanged and answers 200 only once RabbitMQ confirmed them; the consumer verifies them', async () => {
    const options = newQueue();
    const { ledger } = await startConsumer(options);
    const publisher = rabbitMqPublisher({ url: URL, queue: options.queue });
    const forward = createPaymentsForwarder({ publisher, verifier: fixtureOptionsVerifier() });
    const event = paid();
    const signed = sign(event);

    const answer = await forward({
      body: Buffer.from(signed.rawBody).toString('base64'),
      isBase64Encoded: true,
      headers: { ...signed.headers, 'Content-Type': 'application/json' },
    });
    const forged = await forward({
      body: signed.rawBody,
      headers: { ...signed.headers, 'webhook-signature': 'v1,AAAA' },
    });

    expect(answer).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ received: true, outcome: 'forwarded' }),
    });
    expect(forged.statusCode).toBe(401);
    await eventually(() => expect(ledger.runs).toEqual([event.id]));
    await publisher.close!();

    // A broker that does not answer: 503, so the service retries.
    const down = createPaymentsForwarder({
      publisher: rabbitMqPublisher({ url: 'amqp://guest:guest@127.0.0.1:1', queue: options.queue }),
      logger: { error: () => undefined },
    });
    expect((await down({ body: signed.rawBody, headers: signed.headers })).statusCode).toBe(503);
  });
});

function fixtureOptionsVerifier() {
  const webhooks = fixtureOptions().webhooks;
  if (webhooks === false || webhooks === undefined) throw new Error('no verifier');
  return webhooks.verifier;
}

/** The consumer's AMQP channel (Nest's server -> amqp-connection-manager's wrapper -> the amqplib channel). */
function channelOf(app: INestMicroservice): { close(): Promise<void> } {
  const server = (app as unknown as { serverInstance: { channel: { _channel: { close(): Promise<void> } } } })
    .serverInstance;
  return server.channel._channel;
}
