import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { connect, headers as natsHeaders, type JetStreamManager, type NatsConnection } from 'nats';
import {
  MemoryIdempotencyStore,
  OnPaymentEvent,
  PaymentsModule,
  standardWebhooks,
  type PaymentDeliveryListener,
  type PaymentEvent,
} from '../../../lib/index.js';
import {
  NatsDeliveryConsumer,
  natsPublisher,
  PaymentsNatsModule,
  replayNatsDeadLetters,
  type PaymentsNatsOptions,
} from '../../../lib/brokers/nats/index.js';
import { createPaymentsForwarder } from '../../../lib/serverless/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { CURRENT_SECRET, fixtureOptions, sign } from '../../fixtures/webhooks/webhook-app.fixture.js';
import { eventually } from './broker-test.util.js';

const URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
/** Own streams and subjects per run, deleted afterwards. */
const RUN = `T${process.pid}_${Date.now()}`;

class Ledger {
  readonly runs: string[] = [];
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

const logger = new CapturingLogger();
let nc: NatsConnection;
let jsm: JetStreamManager;
const streams: string[] = [];
const apps: INestApplicationContext[] = [];
let seq = 0;

function newStream(): PaymentsNatsOptions & { stream: string; subject: string } {
  seq += 1;
  const stream = `${RUN}_${seq}`;
  streams.push(stream, `${stream}_DEAD`);
  return {
    servers: URL,
    stream,
    subject: `nestjs-payments-test.${RUN}.${seq}`,
    durable: `consumer-${seq}`,
    prefetchCount: 8,
    ackWaitMs: 500,
    retry: { delayMs: 150, maxAttempts: 3 },
  };
}

async function startConsumer(
  options: PaymentsNatsOptions,
  extra: {
    store?: MemoryIdempotencyStore;
    ledger?: Ledger;
    listener?: PaymentDeliveryListener;
    maxBodyBytes?: number;
    toleranceSeconds?: number;
    now?: () => number;
  } = {},
): Promise<{ app: INestApplicationContext; ledger: Ledger }> {
  const ledger = extra.ledger ?? new Ledger();
  const verifier =
    extra.toleranceSeconds !== undefined || extra.now !== undefined
      ? standardWebhooks({ secrets: CURRENT_SECRET, toleranceSeconds: extra.toleranceSeconds, now: extra.now })
      : undefined;
  @Module({
    imports: [
      PaymentsModule.forRoot(
        fixtureOptions({
          store: extra.store,
          deliveryListener: extra.listener,
          ...(verifier ? { verifier } : {}),
          ...(extra.maxBodyBytes ? { maxBodyBytes: extra.maxBodyBytes } : {}),
        }),
      ),
      PaymentsNatsModule.register(options),
    ],
    providers: [{ provide: Ledger, useValue: ledger }, Fulfilment],
  })
  class ConsumerModule {}
  const app = await NestFactory.createApplicationContext(ConsumerModule, { logger });
  apps.push(app);
  return { app, ledger };
}

async function publish(subject: string, body: string | Buffer, headers: Record<string, string>): Promise<void> {
  const h = natsHeaders();
  for (const [name, value] of Object.entries(headers)) h.set(name, value);
  await nc.jetstream().publish(subject, Buffer.from(body), { headers: h });
}

/** Messages in the work stream (work-queue retention: an acknowledged one is removed). */
async function pending(stream: string): Promise<number> {
  return (await jsm.streams.info(stream)).state.messages;
}

/** The parked messages: their reason headers. */
async function parked(stream: string): Promise<Record<string, string>[]> {
  const info = await jsm.streams.info(`${stream}_DEAD`);
  const out: Record<string, string>[] = [];
  for (let s = info.state.first_seq; s <= info.state.last_seq && info.state.messages > 0; s += 1) {
    const message = await jsm.streams.getMessage(`${stream}_DEAD`, { seq: s }).catch(() => undefined);
    if (!message) continue;
    const headers: Record<string, string> = {};
    for (const [name, values] of message.header ?? []) headers[name.toLowerCase()] = values.join(', ');
    out.push(headers);
  }
  return out;
}

const paid = () => createPaymentEvent('payment_intent.succeeded');

beforeAll(async () => {
  Logger.overrideLogger(logger);
  nc = await connect({ servers: URL });
  jsm = await nc.jetstreamManager();
});

afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

afterAll(async () => {
  if (process.env.BROKER_TEST_LOGS) console.log(logger.text());
  for (const stream of streams) await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
});

describe('NATS JetStream consumer (durable, explicit acknowledgement)', () => {
  it('[W4] runs the handler once per event whatever the redeliveries, and acknowledges handled and duplicate messages', async () => {
    const options = newStream();
    const { ledger } = await startConsumer(options);
    const event = paid();
    const signed = sign(event);

    for (let i = 0; i < 3; i += 1) await publish(options.subject, signed.rawBody, signed.headers);

    await eventually(async () => {
      expect(ledger.runs).toEqual([event.id]);
      expect(await pending(options.stream)).toBe(0);
    });
    expect(await parked(options.stream)).toEqual([]);
  });

  it('[W1][W5] never runs a handler for a forged, malformed, oversized or unsigned message: each is parked with its reason and terminated', async () => {
    const options = newStream();
    const { ledger } = await startConsumer(options, { maxBodyBytes: 4096 });
    logger.clear();
    const forged = sign(paid(), {
      secret: `whsec_${Buffer.from('not-the-endpoint-secret-32-bytes').toString('base64')}`,
    });
    const notJson = sign('this is not json');
    const big = sign(JSON.stringify({ ...paid(), padding: 'x'.repeat(8000) }));
    const unsigned = sign(paid());

    await publish(options.subject, forged.rawBody, forged.headers);
    await publish(options.subject, notJson.rawBody, notJson.headers);
    await publish(options.subject, big.rawBody, big.headers);
    await publish(options.subject, unsigned.rawBody, { 'content-type': 'application/json' });

    await eventually(async () => {
      expect(await parked(options.stream)).toHaveLength(4);
      expect(await pending(options.stream)).toBe(0);
    });
    const reasons = (await parked(options.stream)).map((h) => ({
      reason: h['x-payments-reason'],
      status: h['x-payments-status'],
      attempts: h['x-payments-attempts'],
      missing: h['x-payments-missing-headers'],
    }));
    expect(reasons).toEqual(
      expect.arrayContaining([
        { reason: 'invalid_signature', status: '401', attempts: '1', missing: undefined },
        { reason: 'invalid_json', status: '400', attempts: '1', missing: undefined },
        { reason: 'payload_too_large', status: '413', attempts: '1', missing: undefined },
        {
          reason: 'invalid_signature',
          status: '401',
          attempts: '1',
          missing: 'webhook-id, webhook-timestamp, webhook-signature',
        },
      ]),
    );
    expect(ledger.runs).toEqual([]);
    expect(logger.messages('error')).toEqual([]);
  });

  it('retries a failing handler later (nak with a delay), then parks it after maxAttempts; the replay runs it once the cause is fixed', async () => {
    const options = newStream();
    const ledger = new Ledger();
    const outcomes: string[] = [];
    await startConsumer(options, { ledger, listener: { onDelivery: (r) => outcomes.push(r.outcome) } });
    const flaky = paid();
    const broken = paid();
    ledger.failures.set(flaky.id, 1);
    ledger.failures.set(broken.id, 1_000);

    const signedFlaky = sign(flaky);
    const signedBroken = sign(broken);
    await publish(options.subject, signedFlaky.rawBody, signedFlaky.headers);
    await publish(options.subject, signedBroken.rawBody, signedBroken.headers);

    await eventually(async () => {
      expect(ledger.runs).toEqual([flaky.id]);
      expect(await parked(options.stream)).toHaveLength(1);
      expect(await pending(options.stream)).toBe(0);
    });
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(1 + 3);
    expect((await parked(options.stream))[0]).toMatchObject({
      'x-payments-reason': 'failed',
      'x-payments-status': '500',
      'x-payments-attempts': '3',
      'webhook-id': signedBroken.headers['webhook-id'],
    });

    ledger.failures.delete(broken.id); // the fix is deployed
    const moved = await replayNatsDeadLetters({ servers: URL, stream: options.stream, subject: options.subject });

    expect(moved).toBe(1);
    await eventually(() => expect(ledger.runs).toEqual([flaky.id, broken.id]));
    expect(await parked(options.stream)).toEqual([]);
  });

  it('[W4] loses nothing and runs nothing twice when the consumer dies between its handler and its acknowledgement', async () => {
    const options = newStream();
    const store = new MemoryIdempotencyStore(); // the deployment's shared store (Redis, PostgreSQL) in production
    const ledger = new Ledger();
    const outcomes: string[] = [];
    const crashed: { app?: INestApplicationContext } = {};
    const crashOnce: PaymentDeliveryListener = {
      onDelivery(record) {
        outcomes.push(record.outcome);
        // The handler ran and its claim completed; the acknowledgement is not sent yet. The consumer's
        // connection closes now, as in a crash: JetStream delivers the message again after ackWaitMs.
        if (outcomes.length === 1) void crashed.app!.get(NatsDeliveryConsumer).nats!.close();
      },
    };
    crashed.app = (await startConsumer(options, { store, ledger, listener: crashOnce })).app;
    const event = paid();
    const signed = sign(event);

    await publish(options.subject, signed.rawBody, signed.headers);
    await eventually(() => expect(outcomes).toEqual(['handled']));
    // Another instance of the app (same store, same durable consumer) takes over.
    await startConsumer(options, { store, ledger, listener: { onDelivery: (r) => outcomes.push(r.outcome) } });

    await eventually(async () => {
      expect(outcomes).toEqual(['handled', 'duplicate']);
      expect(await pending(options.stream)).toBe(0);
    });
    expect(ledger.runs).toEqual([event.id]);
  });

  it("a message that waited in a backlog is judged against the consuming app's tolerance: within it, handled; beyond it, parked (replayable), never retried", async () => {
    const options = newStream();
    // The streams exist (an earlier run of the consumer made them); the consumer is down while the backlog builds.
    await (await startConsumer(options)).app.close();
    apps.pop();
    const signedAt = Math.floor(Date.now() / 1000);
    const event = paid();
    const stale = paid();
    const signed = sign(event, { timestamp: signedAt });
    const signedStale = sign(stale, { timestamp: signedAt - 7_200 });
    await publish(options.subject, signed.rawBody, signed.headers);
    await publish(options.subject, signedStale.rawBody, signedStale.headers);
    // The consumer starts an hour later, its scheme's tolerance set to the backlog it accepts (3600 s).
    const later = () => (signedAt + 3_600) * 1000;
    const { ledger } = await startConsumer(options, { toleranceSeconds: 3_600, now: later });

    await eventually(async () => {
      expect(ledger.runs).toEqual([event.id]);
      expect(await parked(options.stream)).toHaveLength(1);
    });
    expect((await parked(options.stream))[0]).toMatchObject({
      'x-payments-reason': 'invalid_signature',
      'x-payments-attempts': '1',
    });
  });

  it('the forwarder publishes the bytes and headers unchanged and answers 200 only once JetStream stored them', async () => {
    const options = newStream();
    const { ledger } = await startConsumer(options);
    const publisher = natsPublisher({ servers: URL, subject: options.subject });
    const forward = createPaymentsForwarder({ publisher, verifier: standardWebhooks({ secrets: CURRENT_SECRET }) });
    const event = paid();
    const signed = sign(event);

    const answer = await forward({ body: signed.rawBody, headers: signed.headers, isBase64Encoded: false });
    const lost = natsPublisher({ servers: URL, subject: `nestjs-payments-test.${RUN}.no-stream` });
    const nowhere = await createPaymentsForwarder({ publisher: lost, logger: { error: () => undefined } })({
      body: signed.rawBody,
      headers: signed.headers,
    });
    await lost.close!();

    expect(answer.statusCode).toBe(200);
    expect(nowhere.statusCode).toBe(503); // no stream stores that subject: not confirmed, the service retries
    await eventually(() => expect(ledger.runs).toEqual([event.id]));
    await publisher.close!();
  });
});
