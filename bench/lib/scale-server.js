/**
 * One process of the scale benchmark (bench/scale.bench.js), driven over the scenario protocol of
 * scenario-ipc.js. Options (BENCH_SCENARIO_OPTIONS, JSON):
 *   role: 'receiver' (HTTP, PaymentsModule on 127.0.0.1:0) | 'worker' (no HTTP: an application
 *         context whose BullMQ worker only consumes the queue)
 *   store: 'memory' | 'redis' (RedisIdempotencyStore with `storeKeyPrefix`, shared by every process
 *         of one phase, so claims are seen across instances)
 *   redis: 'single' (127.0.0.1:6379) | 'cluster' (127.0.0.1:7101-7103, ioredis Cluster)
 *   processing: 'inline' | 'queued' (BullMQ queue `queueName` under `queuePrefix`; a receiver only
 *         enqueues (worker: false), a worker runs `concurrency` jobs at once)
 * The no-op handler bumps handlerCounter and records the wall-clock time (ms since the epoch, with
 * sub-ms precision: comparable across processes) of the last run, reported in `extra.lastHandledAt`,
 * and keeps the event ids it handled since the last mark: the parent asks for them with { type: 'ids' }.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_LOG_LEVELS, BENCH_SECRET, EVENT_TYPE, SIGNATURE_HEADER, WEBHOOK_PATH } from './bench-constants.js';
import { decorateClass, decorateMethod } from './decorate.js';
import { handlerCounter, scenarioOptions, serveScenario } from './scenario-ipc.js';
import { packageVersion } from './package-version.js';
import { CLUSTER_NODES, SINGLE_REDIS } from './scale-redis.js';

const options = scenarioOptions();
const {
  role = 'receiver',
  store = 'memory',
  redis = 'single',
  processing = 'inline',
  queueName,
  queuePrefix,
  concurrency = 1,
  storeKeyPrefix,
} = options;
const lib = new URL('../../dist-sample/lib/index.js', import.meta.url).href;
const { OnPaymentEvent, PaymentsModule, RedisIdempotencyStore, hmacVerifier } = await import(lib);

let lastHandledAt = 0;
/** Event ids this process handled since the last mark (sent on { type: 'ids' }, for the exactly-once check). */
let handledIds = [];
class ScaleHandlers {
  onSucceeded(event) {
    handlerCounter.runs++;
    handledIds.push(event.id);
    lastHandledAt = performance.timeOrigin + performance.now();
  }
}
decorateMethod(ScaleHandlers, 'onSucceeded', OnPaymentEvent(EVENT_TYPE));
decorateClass(ScaleHandlers, Injectable());

const { Redis, Cluster } = await import('ioredis');
const clients = [];
const newClient = () => {
  const client =
    redis === 'cluster'
      ? new Cluster(CLUSTER_NODES, { redisOptions: { maxRetriesPerRequest: 1 } })
      : new Redis({ ...SINGLE_REDIS, maxRetriesPerRequest: 1 });
  clients.push(client);
  return client;
};

const webhooks = {
  path: WEBHOOK_PATH,
  verifier: hmacVerifier({ secrets: BENCH_SECRET, header: SIGNATURE_HEADER }),
  allowMemoryStoreInProduction: true,
};
if (store === 'redis') webhooks.store = new RedisIdempotencyStore(newClient(), { keyPrefix: storeKeyPrefix });
if (processing === 'queued') {
  webhooks.processing = {
    queue: {
      // A client of ours on the cluster (the module duplicates it); plain options on a single node.
      connection: redis === 'cluster' ? newClient() : { ...SINGLE_REDIS },
      name: queueName,
      prefix: queuePrefix,
      worker: role === 'worker',
      concurrency,
    },
  };
}

class ScaleModule {}
decorateClass(
  ScaleModule,
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
    providers: [ScaleHandlers],
  }),
);

let app;
let port = 0;
if (role === 'worker') {
  app = await NestFactory.createApplicationContext(ScaleModule, { logger: BENCH_LOG_LEVELS });
  await app.init();
} else {
  app = await NestFactory.create(ScaleModule, { rawBody: true, logger: BENCH_LOG_LEVELS });
  await app.listen(0, '127.0.0.1');
  port = app.getHttpServer().address().port;
}

process.on('message', (message) => {
  if (message?.type === 'ids') process.send({ type: 'ids', ids: handledIds });
});
serveScenario({
  port,
  nestVersion: packageVersion('@nestjs/core', import.meta.dirname),
  onMark: () => {
    lastHandledAt = 0;
    handledIds = [];
  },
  extra: () => ({ lastHandledAt }),
  close: async () => {
    await app.close();
    for (const client of clients) client.disconnect();
  },
});
