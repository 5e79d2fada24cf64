/**
 * Builds our receiver's app for a benchmark: PaymentsModule (Nest 12) with `hmacVerifier` on the same
 * scheme as the baseline and a no-op `@OnPaymentEvent('payment_intent.succeeded')` handler that bumps
 * `handlerCounter`. Shared by the HTTP scenario (scenarios/ours.server.js) and the instruction count
 * (callgrind.js), so both measure the same app. Options:
 *   adapter: 'express' | 'fastify'
 *   store: 'memory' (default store) | 'redis' (RedisIdempotencyStore on 127.0.0.1:6379, own key prefix)
 *   processing: 'inline' | 'queued' (BullMQ, own queue name, worker: false: acknowledgement only)
 *   logger: Nest log levels (default BENCH_LOG_LEVELS); 'nest-default' leaves Nest's own default
 *   logDeliveries: the `webhooks.logDeliveries` option (one line per delivery), when set
 *   lib: URL of another compiled lib/index.js (before/after in one run)
 *   maxEntries: a MemoryIdempotencyStore of that size instead of the default store
 * Returns the app (not initialised), `extra` (what the parent checks beside the answers) and the
 * cleanups to run after `app.close()`.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_LOG_LEVELS, BENCH_SECRET, EVENT_TYPE, SIGNATURE_HEADER, WEBHOOK_PATH } from './bench-constants.js';
import { decorateClass, decorateMethod } from './decorate.js';
import { handlerCounter } from './scenario-ipc.js';
import { nestLoggerOption } from './nest-logger-option.js';

const DEFAULT_LIB = new URL('../../dist-sample/lib/index.js', import.meta.url).href;

export async function createOursApp(scenario = {}) {
  const { adapter = 'express', store = 'memory', processing = 'inline', logger = BENCH_LOG_LEVELS, logDeliveries, maxEntries, lib = DEFAULT_LIB } = scenario;
  const { MemoryIdempotencyStore, OnPaymentEvent, PaymentsModule, RedisIdempotencyStore, hmacVerifier } = await import(lib);
  const runId = `bench-${process.pid}-${Date.now()}`;
  const redisOptions = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: 1 };
  const cleanups = [];
  let extra;

  class PaymentHandlers {
    onSucceeded() {
      handlerCounter.runs++;
    }
  }
  decorateMethod(PaymentHandlers, 'onSucceeded', OnPaymentEvent(EVENT_TYPE));
  decorateClass(PaymentHandlers, Injectable());

  const webhooks = {
    path: WEBHOOK_PATH,
    verifier: hmacVerifier({ secrets: BENCH_SECRET, header: SIGNATURE_HEADER }),
  };
  if (logDeliveries !== undefined) webhooks.logDeliveries = logDeliveries;
  if (store === 'memory' && maxEntries !== undefined) webhooks.store = new MemoryIdempotencyStore({ maxEntries });
  if (store === 'redis') {
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisOptions);
    const keyPrefix = `${runId}:`;
    webhooks.store = new RedisIdempotencyStore(redis, { keyPrefix });
    cleanups.push(async () => {
      await deleteKeys(redis, `${keyPrefix}*`);
      redis.disconnect();
    });
  }
  if (processing === 'queued') {
    const name = runId;
    webhooks.processing = { queue: { connection: redisOptions, name, worker: false } };
    const { Queue } = await import('bullmq');
    const queue = new Queue(name, { connection: redisOptions });
    extra = async () => ({ jobsQueued: await queue.count() });
    cleanups.push(async () => {
      await queue.obliterate({ force: true });
      await queue.close();
    });
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
          webhooks,
        }),
      ],
      providers: [PaymentHandlers],
    }),
  );

  const httpAdapter = adapter === 'fastify' ? new (await import('@nestjs/platform-fastify')).FastifyAdapter() : undefined;
  const appOptions = { rawBody: true, ...nestLoggerOption(logger) };
  const app = httpAdapter ? await NestFactory.create(BenchModule, httpAdapter, appOptions) : await NestFactory.create(BenchModule, appOptions);
  return { app, extra, cleanups };
}

async function deleteKeys(redis, pattern) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}
