/**
 * Memory benchmark (run by bench/run.js as `node --expose-gc bench/memory.bench.js [--quick]`; with
 * `--growth`, only the retained heap for 10k, 100k and 1M ids, as JSON):
 *  1. retained: heap used by a `MemoryIdempotencyStore` (default options) holding N completed runs,
 *     filled as the dispatcher fills it, the ids taken from a JSON.parse'd 1 KB delivery as the receiver
 *     has it (a `payment_intent.succeeded`, one handler): with the record API of issue 40 (`--api
 *     record`, the default), one claim then one complete of the slot `succeeded|<handler>` in the
 *     intent's record `i:<intent id>` (the lib's own `eventRecordOf` and `runSlot`); with the one-key API
 *     of 599366d and earlier (`--api key`), of the key `${event.id}:${handlerId}`. Measured as heapUsed
 *     after a full GC minus heapUsed after a full GC before the store was created. (A `randomUUID()`
 *     string would overstate it: Node builds it by concatenation, and the unflattened cons-string tree it
 *     keeps weighs ~490 bytes.);
 *  2. per handled delivery: the heap the real `PaymentEventsDispatcher` (a Nest application context,
 *     one no-op handler, the default store) leaves behind per delivery it handles, whatever keys its lib
 *     keeps: 20,000 deliveries (5,000 with --quick), a full GC, heapUsed, 20,000 more, a full GC, the
 *     difference over 20,000. The API is the lib's own, so it compares any two builds;
 *  3. steady state: a store with maxEntries 50k driven through 200k deliveries by the real dispatcher,
 *     heap after a full GC sampled every 50k: it must stop growing once the store is full, and the
 *     store must stay at maxEntries.
 *
 *   node --expose-gc bench/memory.bench.js [--quick] [--lib DIR] [--api record|key]
 *   node --expose-gc bench/memory.bench.js --compare --before-lib DIR [--lib DIR] [--rounds 3] [--out FILE]
 *       issue 40: 1 and 2 for `--lib` (record API) and `--before-lib` (one-key API), each in a process of
 *       its own per round, rounds interleaved; medians into FILE (default results/memory-issue40.json)
 */
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_SECRET, EVENT_TYPE, SIGNATURE_HEADER } from './lib/bench-constants.js';
import { decorateClass, decorateMethod } from './lib/decorate.js';
import { signedDelivery } from './lib/signed-payloads.js';
import { median, round } from './lib/stats.js';

const benchDir = new URL('.', import.meta.url).pathname;
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    growth: { type: 'boolean', default: false },
    lib: { type: 'string', default: 'dist-sample/lib' },
    api: { type: 'string', default: 'record' },
    compare: { type: 'boolean', default: false },
    'before-lib': { type: 'string' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: `${benchDir}results/memory-issue40.json` },
    // A child of --compare: only the figures 1 and 2, as one JSON line.
    'retained-only': { type: 'boolean', default: false },
  },
});
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
if (!['record', 'key'].includes(args.api)) throw new Error(`--api must be record or key, not ${args.api}`);
const quick = args.quick;
const RETAINED = quick ? 20_000 : 100_000;
const PER_DELIVERY = quick ? 5_000 : 20_000;
const DELIVERIES = quick ? 40_000 : 200_000;
const MAX_ENTRIES = quick ? 10_000 : 50_000;
const HANDLER_ID = 'PaymentHandlers.onSucceeded';
const LEASE_MS = 300_000;
const RETENTION_MS = 259_200_000;
const MB = 2 ** 20;
const libDir = (dir) => new URL(`${dir.replace(/\/$/, '')}/`, `file://${process.cwd()}/`).href;

if (args.compare) {
  await compare();
  process.exit(0);
}

const libUrl = libDir(args.lib);
const { MemoryIdempotencyStore, OnPaymentEvent, PaymentsModule, hmacVerifier } = await import(`${libUrl}index.js`);
// Internal: the dispatcher is not part of the public surface.
const { PaymentEventsDispatcher } = await import(`${libUrl}webhooks/dispatch/payment-events.dispatcher.js`);
// Internal, record API only: the record and the slot of a delivery, as the dispatcher makes them.
const recordKeys = args.api === 'record' ? await import(`${libUrl}webhooks/records/record-keys.js`) : undefined;

/** A delivery's event as the receiver parses it (fresh id), the raw body left to the GC. */
function receivedEvent() {
  return JSON.parse(Buffer.from(signedDelivery().body).toString('utf8'));
}

function settledHeap() {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heapUsed, arrayBuffers };
}

/** Claims then completes the run of one delivery's `event` in `store`, in the API of the lib (`--api`). */
async function handleOne(store, event) {
  if (recordKeys === undefined) {
    const key = `${event.id}:${HANDLER_ID}`;
    const claim = await store.claim(key, LEASE_MS);
    if (claim.status !== 'claimed') throw new Error(`unexpected claim ${claim.status}`);
    await store.complete(key, claim.token, RETENTION_MS);
    return;
  }
  const record = recordKeys.eventRecordOf(event, '');
  const slot = recordKeys.runSlot(record, HANDLER_ID);
  const claim = await store.claim(record.key, { slot, eventId: event.id, leaseMs: LEASE_MS });
  if (claim.status !== 'claimed') throw new Error(`unexpected claim ${claim.status}`);
  await store.complete(record.key, { slot, token: claim.token, eventId: event.id, retentionMs: RETENTION_MS });
}

async function retained(count = RETAINED) {
  const before = settledHeap();
  // The default store holds 100k; a larger count gets a store that size (how memory grows with ids).
  const store = count > 100_000 ? new MemoryIdempotencyStore({ maxEntries: count }) : new MemoryIdempotencyStore();
  for (let i = 0; i < count; i++) await handleOne(store, receivedEvent());
  const after = settledHeap();
  // Keep `store` reachable until after the measurement (V8 may free what a dead variable holds).
  if (store.size !== count) throw new Error(`store holds ${store.size}, expected ${count}`);
  return {
    events: count,
    api: args.api,
    storeSize: store.size,
    heapMB: round((after.heapUsed - before.heapUsed) / MB, 2),
    arrayBuffersMB: round((after.arrayBuffers - before.arrayBuffers) / MB, 2),
    bytesPerEvent: Math.round((after.heapUsed - before.heapUsed) / count),
  };
}

/** A Nest application context with one no-op handler of EVENT_TYPE and `store`; its dispatcher. */
async function dispatcherApp(store, counter) {
  class PaymentHandlers {
    onSucceeded() {
      counter.handled++;
    }
  }
  decorateMethod(PaymentHandlers, 'onSucceeded', OnPaymentEvent(EVENT_TYPE));
  decorateClass(PaymentHandlers, Injectable());
  class MemoryBenchModule {}
  decorateClass(
    MemoryBenchModule,
    Module({
      imports: [
        PaymentsModule.forRoot({
          apiKey: 'bench-api-key-not-a-real-one',
          environment: 'sandbox',
          baseUrl: 'http://127.0.0.1:9',
          allowInsecureHttp: true,
          webhooks: { verifier: hmacVerifier({ secrets: BENCH_SECRET, header: SIGNATURE_HEADER }), store },
        }),
      ],
      providers: [PaymentHandlers],
    }),
  );
  const app = await NestFactory.createApplicationContext(MemoryBenchModule, { logger: false });
  await app.init();
  return { app, dispatcher: app.get(PaymentEventsDispatcher) };
}

async function dispatchOne(dispatcher, i) {
  const result = await dispatcher.dispatch(receivedEvent(), { receivedAt: new Date() });
  if (result.outcome !== 'handled') throw new Error(`delivery ${i}: ${result.outcome}`);
}

/** Heap left behind per handled delivery by the real dispatcher and the default store (figure 2). */
async function perDelivery() {
  const counter = { handled: 0 };
  const store = new MemoryIdempotencyStore();
  const { app, dispatcher } = await dispatcherApp(store, counter);
  for (let i = 1; i <= PER_DELIVERY; i++) await dispatchOne(dispatcher, i);
  const before = settledHeap();
  for (let i = 1; i <= PER_DELIVERY; i++) await dispatchOne(dispatcher, i);
  const after = settledHeap();
  const storeSize = store.size;
  await app.close();
  return {
    warmup: PER_DELIVERY,
    deliveries: PER_DELIVERY,
    handled: counter.handled,
    storeSize,
    bytesPerDelivery: Math.round((after.heapUsed - before.heapUsed) / PER_DELIVERY),
  };
}

async function steadyState() {
  const counter = { handled: 0 };
  const store = new MemoryIdempotencyStore({ maxEntries: MAX_ENTRIES });
  const { app, dispatcher } = await dispatcherApp(store, counter);
  const samples = [];
  const start = settledHeap();
  for (let i = 1; i <= DELIVERIES; i++) {
    await dispatchOne(dispatcher, i);
    if (i % (DELIVERIES / 4) === 0) {
      samples.push({
        deliveries: i,
        heapMB: round((settledHeap().heapUsed - start.heapUsed) / MB, 2),
        storeSize: store.size,
      });
    }
  }
  await app.close();
  const half = samples[1];
  const last = samples.at(-1);
  return {
    deliveries: DELIVERIES,
    maxEntries: MAX_ENTRIES,
    handled: counter.handled,
    storeSize: last.storeSize,
    heapMB: last.heapMB,
    growthSecondHalfMB: round(last.heapMB - half.heapMB, 2),
    samples,
  };
}

/** Issue 40: figures 1 and 2 for `--lib` (record API) and `--before-lib` (one-key API), interleaved. */
async function compare() {
  if (!args['before-lib']) throw new Error('--compare needs --before-lib DIR (the one-key build)');
  const variants = [
    { id: 'ours', lib: args.lib, api: 'record' },
    { id: 'before', lib: args['before-lib'], api: 'key' },
  ];
  const runs = Object.fromEntries(variants.map((v) => [v.id, []]));
  const startedAt = new Date();
  const loadAtStart = loadavg().map((l) => round(l, 2));
  for (let r = 0; r < Number(args.rounds); r++) {
    for (let i = 0; i < variants.length; i++) {
      const v = variants[(i + r) % variants.length];
      const result = await new Promise((resolve, reject) => {
        const child = fork(
          new URL(import.meta.url).pathname,
          ['--retained-only', '--lib', v.lib, '--api', v.api, ...(quick ? ['--quick'] : [])],
          { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
        );
        let out = '';
        child.stdout.on('data', (chunk) => (out += chunk));
        child.on('exit', (code) =>
          code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1))) : reject(new Error(`${v.id}: exit ${code}`)),
        );
      });
      runs[v.id].push(result);
      console.log(
        `round ${r + 1} ${v.id.padEnd(7)} store alone ${result.retained.bytesPerEvent} bytes/run  ` +
          `through the dispatcher ${result.perDelivery.bytesPerDelivery} bytes/delivery (store ${result.perDelivery.storeSize})  (load ${loadavg()[0].toFixed(1)})`,
      );
    }
  }
  const summary = Object.fromEntries(
    variants.map((v) => [
      v.id,
      {
        lib: v.lib,
        api: v.api,
        storeBytesPerRun: median(runs[v.id].map((x) => x.retained.bytesPerEvent)),
        bytesPerHandledDelivery: median(runs[v.id].map((x) => x.perDelivery.bytesPerDelivery)),
        perRound: runs[v.id],
      },
    ]),
  );
  const output = {
    date: startedAt.toISOString(),
    machine: { loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg().map((l) => round(l, 2)) },
    config: {
      storeRuns: RETAINED,
      warmupDeliveries: PER_DELIVERY,
      countedDeliveries: PER_DELIVERY,
      rounds: Number(args.rounds),
      method:
        'node --expose-gc, one process per variant and round; store alone: heapUsed after 3 gc() with the store full minus before it; per handled delivery: the real dispatcher and default MemoryIdempotencyStore, heapUsed after 3 gc() before and after the counted deliveries',
    },
    variants: summary,
    ratios: {
      bytesPerHandledDeliveryVsBefore: round(
        summary.ours.bytesPerHandledDelivery / summary.before.bytesPerHandledDelivery,
        3,
      ),
    },
  };
  writeFileSync(args.out, `${JSON.stringify(output, null, 2)}\n`);
  console.log(
    JSON.stringify({ ours: summary.ours.bytesPerHandledDelivery, before: summary.before.bytesPerHandledDelivery }),
  );
  console.log(`Wrote ${args.out}`);
}

// --growth: retained heap for 10k, 100k and 1M ids (issue 22, item 5), printed as JSON.
if (args.growth) {
  const points = [];
  for (const count of [10_000, 100_000, 1_000_000]) points.push(await retained(count));
  console.log(JSON.stringify({ retainedGrowth: points }));
  process.exit(0);
}
if (args['retained-only']) {
  console.log(JSON.stringify({ retained: await retained(), perDelivery: await perDelivery() }));
  process.exit(0);
}
const result = { retained: await retained(), perDelivery: await perDelivery(), steadyState: await steadyState() };
if (process.send) process.send({ type: 'memory-result', result });
else console.log(JSON.stringify(result, null, 2));
