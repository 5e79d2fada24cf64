/**
 * Builds our receiver's app for a benchmark: PaymentsModule (Nest 12) with `hmacVerifier` on the same
 * scheme as the baseline and a no-op `@OnPaymentEvent('payment_intent.succeeded')` handler that bumps
 * `handlerCounter`. Shared by the HTTP scenario (scenarios/ours.server.js) and the instruction count
 * (callgrind.js), so both measure the same app. Options:
 *   adapter: 'express' | 'fastify'
 *   store: 'memory' (default store) | 'redis' (RedisIdempotencyStore on 127.0.0.1:6379, own key prefix)
 *          | 'redis-cluster' (the same on the 3-master Cluster of .ci/redis-cluster.sh)
 *          | 'postgres' (PostgresIdempotencyStore on a database of its own, created and dropped)
 *   autoPipelining: ioredis enableAutoPipelining on the store's client (Redis scenarios)
 *   redisPort: port of the store's Redis (the bench's own instance; default 6379)
 *   transactional: true makes the handler `{ transactional: true }` (pgTransactionRunner, own database)
 *          doing one INSERT through ctx.transaction.client (prepared, the hand-written inbox's statement)
 *   processing: 'inline' | 'queued' (BullMQ, own queue name, worker: false: acknowledgement only)
 *   logger: Nest log levels (default BENCH_LOG_LEVELS); 'nest-default' leaves Nest's own default
 *   logDeliveries: the `webhooks.logDeliveries` option (one line per delivery), when set
 *   lib: URL of another compiled lib/index.js (before/after in one run)
 *   maxEntries: a MemoryIdempotencyStore of that size instead of the default store
 *   eventTypes: N > 1 adds N - 1 handlers, each on another event type (none delivered): cost vs handlers of other events
 *   handlersOnEvent: M > 1 adds M - 1 more no-op handlers on the delivered event type
 *   maxBodyBytes: webhooks.maxBodyBytes (and Fastify's bodyLimit), for the payload-size runs
 *   reconcile: the `webhooks.reconcile` option, when set (issue 42: reconciliation is on by default since
 *          the app has the client and the receiver; `false` measures the receiver as before that default)
 *   apiKey, baseUrl: the client's key and API (default: a key nothing accepts, a closed port); the
 *          current-state bench points them at the in-process PaymentsSimulator
 *   current: true opts the handler(s) on the delivered event in to current-state handling ({ current: true })
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
  const {
    adapter = 'express',
    store = 'memory',
    processing = 'inline',
    logger = BENCH_LOG_LEVELS,
    logDeliveries,
    maxEntries,
    lib = DEFAULT_LIB,
  } = scenario;
  const { transactional = false } = scenario;
  const { MemoryIdempotencyStore, OnPaymentEvent, PaymentsModule, RedisIdempotencyStore, hmacVerifier } = await import(
    lib
  );
  const runId = `bench-${process.pid}-${Date.now()}`;
  const redisOptions = { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: 1 };
  // The store's Redis: the bench's own instance when run.js started one (`redisPort`), else 6379.
  const storeRedisOptions = { ...redisOptions, port: scenario.redisPort ?? 6379 };
  const cleanups = [];
  let extra;

  // PostgreSQL scenarios: own database, statements counted per delivery (lib/postgres-bench.js).
  const postgresBench = store === 'postgres' || transactional ? await import('./postgres-bench.js') : undefined;
  const pgBench = await postgresBench?.createBenchDatabase(runId);
  if (pgBench) {
    extra = pgBench.extra;
    cleanups.push(() => pgBench.drop());
  }

  class PaymentHandlers {
    onSucceeded() {
      handlerCounter.runs++;
    }
  }
  // PostgreSQL scenarios use their own handler class, so the others (and callgrind) measure the same no-op as before.
  class PostgresPaymentHandlers {
    async onSucceeded(event, ctx) {
      handlerCounter.runs++;
      pgBench.counts.deliveries++;
      // The inbox scenario's handler: one INSERT in the inbox's transaction, prepared through the
      // transaction's pg client, as the hand-written inbox's effect (bench/lib/hand-inbox.js).
      if (transactional)
        await ctx.transaction.client.query({ ...postgresBench.BENCH_LEDGER_INSERT, values: [event.id, 100] });
    }
  }
  const Handlers = pgBench ? PostgresPaymentHandlers : PaymentHandlers;
  const current = scenario.current === true ? { current: true } : {};
  decorateMethod(
    Handlers,
    'onSucceeded',
    transactional
      ? OnPaymentEvent(EVENT_TYPE, { transactional: true, ...current })
      : scenario.current === true
        ? OnPaymentEvent(EVENT_TYPE, current)
        : OnPaymentEvent(EVENT_TYPE),
  );
  // Growth runs (bench/callgrind.js --growth): more handlers, of other event types or of the same one.
  const { eventTypes = 1, handlersOnEvent = 1, maxBodyBytes } = scenario;
  for (let i = 1; i < eventTypes; i++) {
    Handlers.prototype[`onOther${i}`] = function () {};
    decorateMethod(Handlers, `onOther${i}`, OnPaymentEvent(`bench_type_${i}.happened`));
  }
  for (let i = 1; i < handlersOnEvent; i++) {
    Handlers.prototype[`onSucceededToo${i}`] = function () {};
    decorateMethod(Handlers, `onSucceededToo${i}`, OnPaymentEvent(EVENT_TYPE));
  }
  decorateClass(Handlers, Injectable());

  const webhooks = {
    path: WEBHOOK_PATH,
    verifier: hmacVerifier({ secrets: BENCH_SECRET, header: SIGNATURE_HEADER }),
    // The bench runs with NODE_ENV=production and one instance: the memory store is allowed there.
    allowMemoryStoreInProduction: true,
  };
  if (logDeliveries !== undefined) webhooks.logDeliveries = logDeliveries;
  if (maxBodyBytes !== undefined) webhooks.maxBodyBytes = maxBodyBytes;
  if (scenario.reconcile !== undefined) webhooks.reconcile = scenario.reconcile;
  if (store === 'memory' && maxEntries !== undefined) webhooks.store = new MemoryIdempotencyStore({ maxEntries });
  if (store === 'redis') {
    const { Redis } = await import('ioredis');
    const redis = new Redis({ ...storeRedisOptions, enableAutoPipelining: scenario.autoPipelining === true });
    const keyPrefix = `${runId}:`;
    webhooks.store = new RedisIdempotencyStore(redis, { keyPrefix });
    cleanups.push(async () => {
      await deleteKeys(redis, `${keyPrefix}*`);
      redis.disconnect();
    });
  }
  if (store === 'redis-cluster') {
    // The 3-master Cluster of .ci/redis-cluster.sh (REDIS_CLUSTER_NODES, default ports 7101-7103).
    const { Cluster } = await import('ioredis');
    const nodes = (process.env.REDIS_CLUSTER_NODES ?? '127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103')
      .split(',')
      .map((node) => ({ host: node.split(':')[0], port: Number(node.split(':')[1]) }));
    const cluster = new Cluster(nodes, {
      enableAutoPipelining: scenario.autoPipelining === true,
      redisOptions: { maxRetriesPerRequest: 1 },
    });
    const keyPrefix = `${runId}:`;
    webhooks.store = new RedisIdempotencyStore(cluster, { keyPrefix });
    cleanups.push(async () => {
      for (const node of cluster.nodes('master')) await deleteKeys(node, `${keyPrefix}*`);
      cluster.disconnect();
    });
  }
  if (store === 'postgres') {
    const { PostgresIdempotencyStore } = await import(lib);
    webhooks.store = new PostgresIdempotencyStore(pgBench.pool, { table: 'bench_idempotency' });
  }
  if (transactional) {
    const { pgTransactionRunner } = await import(lib);
    const { BENCH_LEDGER_SQL } = await import('./postgres-bench.js');
    await pgBench.pool.query(BENCH_LEDGER_SQL);
    webhooks.transactions = { runner: pgTransactionRunner(pgBench.pool) };
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
          apiKey: scenario.apiKey ?? 'bench-api-key-not-a-real-one',
          environment: 'sandbox',
          baseUrl: scenario.baseUrl ?? 'http://127.0.0.1:9',
          allowInsecureHttp: true,
          webhooks,
        }),
      ],
      providers: [Handlers],
    }),
  );

  const httpAdapter =
    adapter === 'fastify'
      ? new (await import('@nestjs/platform-fastify')).FastifyAdapter(
          maxBodyBytes === undefined ? undefined : { bodyLimit: maxBodyBytes },
        )
      : undefined;
  const appOptions = { rawBody: true, ...nestLoggerOption(logger) };
  const app = httpAdapter
    ? await NestFactory.create(BenchModule, httpAdapter, appOptions)
    : await NestFactory.create(BenchModule, appOptions);
  return { app, extra, cleanups };
}

/** Deletes the keys matching `pattern`, one UNLINK per key in a pipeline (a Cluster node refuses a multi-key UNLINK across slots). */
async function deleteKeys(redis, pattern) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.unlink(key);
    await pipeline.exec();
  } while (cursor !== '0');
}
