/**
 * One consumer of bench/receive.bench.js, in its own process: drains `count` pre-published signed
 * deliveries from `queue` with the prefetch given, then reports the wall time from the first delivery to
 * the last acknowledgement and this process's CPU time over that window (process.cpuUsage).
 *   kind 'ours': a Nest microservice, createPaymentsRabbitMqServer + PaymentsRabbitMqModule (Nest's own
 *                RMQ transport, manual ack), PaymentsModule with hmacVerifier, the memory store and one
 *                no-op @OnPaymentEvent handler;
 *   kind 'hand': amqplib alone: the same HMAC in constant time, JSON.parse, a Map of ids, the ack.
 * Options: BENCH_CONSUMER (JSON) { kind, url, queue, count, prefetch, lib }
 */
import 'reflect-metadata';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BENCH_SECRET, EVENT_TYPE, SIGNATURE_HEADER } from '../lib/bench-constants.js';
import { decorateClass, decorateMethod } from '../lib/decorate.js';

const options = JSON.parse(process.env.BENCH_CONSUMER);
const { kind, url, queue, count, prefetch } = options;
let started;
let cpuAtStart;
let done = 0;
let finish;
const finished = new Promise((resolve) => (finish = resolve));

/** The first delivery starts the clock; the last one stops it. */
function delivered() {
  if (done === 0) {
    started = process.hrtime.bigint();
    cpuAtStart = process.cpuUsage();
  }
  done += 1;
  if (done === count) {
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    const cpu = process.cpuUsage(cpuAtStart);
    finish({ elapsedMs, cpuUs: cpu.user + cpu.system });
  }
}

let close;
if (kind === 'hand') {
  const amqp = (await import('amqplib')).default;
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.prefetch(prefetch);
  const seen = new Map();
  await channel.consume(
    queue,
    (message) => {
      const given = message.properties.headers?.[SIGNATURE_HEADER];
      const expected = createHmac('sha256', BENCH_SECRET).update(message.content).digest();
      const received = typeof given === 'string' ? Buffer.from(given, 'hex') : Buffer.alloc(0);
      if (received.length === expected.length && timingSafeEqual(received, expected)) {
        const event = JSON.parse(message.content.toString('utf8'));
        if (!seen.has(event.id)) seen.set(event.id, true);
      }
      channel.ack(message);
      delivered();
    },
    { noAck: false },
  );
  close = async () => {
    await channel.close();
    await connection.close();
  };
} else {
  const { Injectable, Module } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  const lib = await import(options.lib);
  const rabbit = await import(options.lib.replace(/index\.js$/, 'brokers/rabbitmq/index.js'));
  class Handlers {
    // Counted in the handler (it runs before the ack, which follows at once): no listener, no allocation.
    onSucceeded() {
      delivered();
    }
  }
  decorateMethod(Handlers, 'onSucceeded', lib.OnPaymentEvent(EVENT_TYPE));
  decorateClass(Handlers, Injectable());
  const consumer = { urls: [url], queue, prefetchCount: prefetch };
  class BenchModule {}
  decorateClass(
    BenchModule,
    Module({
      imports: [
        lib.PaymentsModule.forRoot({
          apiKey: 'sk_test_bench',
          environment: 'sandbox',
          baseUrl: 'https://sandbox.payments.test',
          webhooks: {
            verifier: lib.hmacVerifier({ secrets: BENCH_SECRET, header: SIGNATURE_HEADER }),
            // One process, NODE_ENV=production: the memory store is allowed here.
            allowMemoryStoreInProduction: true,
          },
        }),
        await rabbit.PaymentsRabbitMqModule.register(consumer),
      ],
      providers: [Handlers],
    }),
  );
  const app = await NestFactory.createMicroservice(BenchModule, {
    strategy: await rabbit.createPaymentsRabbitMqServer(consumer),
    logger: ['error', 'warn'],
  });
  await app.listen();
  close = () => app.close();
}

const result = await finished;
process.send({ type: 'done', ...result });
await close();
process.exit(0);
