/**
 * Our receiver: PaymentsModule (Nest 12) with `hmacVerifier` on the same scheme as the baseline and a
 * no-op `@OnPaymentEvent('payment_intent.succeeded')` handler. Loads the compiled library from
 * dist-sample/lib (npm run bench compiles it first). Options (BENCH_SCENARIO_OPTIONS):
 *   adapter: 'express' | 'fastify'
 *   store: 'memory' (default store) | 'redis' (RedisIdempotencyStore on 127.0.0.1:6379, own key prefix)
 *   processing: 'inline' | 'queued' (BullMQ, own queue name, worker: false: acknowledgement only)
 *   logger: Nest log levels (default BENCH_LOG_LEVELS); lib: URL of another compiled lib/index.js;
 *   maxEntries: a MemoryIdempotencyStore of that size instead of the default store
 * Keys and jobs of a Redis scenario are removed when the parent closes it.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_LOG_LEVELS, BENCH_SECRET, EVENT_TYPE, SIGNATURE_HEADER, WEBHOOK_PATH } from '../lib/bench-constants.js';
import { decorateClass, decorateMethod } from '../lib/decorate.js';
import { packageVersion } from '../lib/package-version.js';
import { handlerCounter, scenarioOptions, serveScenario } from '../lib/scenario-ipc.js';

const {
  adapter = 'express',
  store = 'memory',
  processing = 'inline',
  logger = BENCH_LOG_LEVELS,
  // A MemoryIdempotencyStore with this maxEntries instead of the default store (default 100000).
  maxEntries,
  // Another compiled copy of lib/ (its index.js), to compare a change before/after in one run.
  lib = new URL('../../dist-sample/lib/index.js', import.meta.url).href,
} = scenarioOptions();
const { MemoryIdempotencyStore, OnPaymentEvent, PaymentsModule, RedisIdempotencyStore, hmacVerifier } = await import(lib);
const runId = `bench-${process.pid}-${Date.now()}`;
const redisOptions = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: 1 };
const cleanups = [];
/** Reports what the parent checks beside the answers (queued: the jobs really in the queue). */
let extra;

class PaymentHandlers {
  onSucceeded() {
    handlerCounter.runs++;
  }
}
decorateMethod(PaymentHandlers, 'onSucceeded', OnPaymentEvent(EVENT_TYPE));
decorateClass(PaymentHandlers, Injectable());

/** The `webhooks` options of this scenario. */
async function webhooksOptions() {
  const options = {
    path: WEBHOOK_PATH,
    verifier: hmacVerifier({ secrets: BENCH_SECRET, header: SIGNATURE_HEADER }),
  };
  if (store === 'memory' && maxEntries !== undefined) options.store = new MemoryIdempotencyStore({ maxEntries });
  if (store === 'redis') {
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisOptions);
    const keyPrefix = `${runId}:`;
    options.store = new RedisIdempotencyStore(redis, { keyPrefix });
    cleanups.push(async () => {
      await deleteKeys(redis, `${keyPrefix}*`);
      redis.disconnect();
    });
  }
  if (processing === 'queued') {
    const name = runId;
    options.processing = { queue: { connection: redisOptions, name, worker: false } };
    const { Queue } = await import('bullmq');
    const queue = new Queue(name, { connection: redisOptions });
    extra = async () => ({ jobsQueued: await queue.count() });
    cleanups.push(async () => {
      await queue.obliterate({ force: true });
      await queue.close();
    });
  }
  return options;
}

async function deleteKeys(redis, pattern) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}

class BenchModule {}
decorateClass(
  BenchModule,
  Module({
    imports: [
      PaymentsModule.forRoot({
        apiKey: 'bench-api-key-not-a-real-one',
        environment: 'sandbox',
        baseUrl: 'http://127.0.0.1:9',
        allowInsecureHttp: true,
        webhooks: await webhooksOptions(),
      }),
    ],
    providers: [PaymentHandlers],
  }),
);

const httpAdapter = adapter === 'fastify' ? new (await import('@nestjs/platform-fastify')).FastifyAdapter() : undefined;
const app = httpAdapter
  ? await NestFactory.create(BenchModule, httpAdapter, { rawBody: true, logger })
  : await NestFactory.create(BenchModule, { rawBody: true, logger });
await app.listen(0, '127.0.0.1');

serveScenario({
  port: app.getHttpServer().address().port,
  nestVersion: packageVersion('@nestjs/core', import.meta.dirname),
  extra,
  close: async () => {
    await app.close();
    for (const cleanup of cleanups) await cleanup();
  },
});
