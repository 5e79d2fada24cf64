/**
 * Memory benchmark (run by bench/run.js as `node --expose-gc bench/memory.bench.js [--quick]`; with
 * `--growth`, only the retained heap for 10k, 100k and 1M ids, as JSON):
 *  1. retained: heap used by a `MemoryIdempotencyStore` (default options) holding N completed events,
 *     filled as the dispatcher does (claim then complete of `${event.id}:${handlerId}`, the id taken
 *     from a JSON.parse'd 1 KB delivery as the receiver has it), measured as heapUsed after a full GC
 *     minus heapUsed after a full GC before the store was created. (A `randomUUID()` string would
 *     overstate it: Node builds it by concatenation, and the unflattened cons-string tree it keeps
 *     weighs ~490 bytes.);
 *  2. steady state: a store with maxEntries 50k driven through 200k deliveries by the real
 *     `PaymentEventsDispatcher` (a Nest application context with one no-op handler), heap after a
 *     full GC sampled every 50k: it must stop growing once the store is full, and the store must stay
 *     at maxEntries.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_SECRET, EVENT_TYPE, SIGNATURE_HEADER } from './lib/bench-constants.js';
import { decorateClass, decorateMethod } from './lib/decorate.js';
import { signedDelivery } from './lib/signed-payloads.js';
import { round } from './lib/stats.js';
import { MemoryIdempotencyStore, OnPaymentEvent, PaymentsModule, hmacVerifier } from '../dist-sample/lib/index.js';
// Internal: the dispatcher is not part of the public surface.
import { PaymentEventsDispatcher } from '../dist-sample/lib/webhooks/dispatch/payment-events.dispatcher.js';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const quick = process.argv.includes('--quick');
const RETAINED = quick ? 20_000 : 100_000;
const DELIVERIES = quick ? 40_000 : 200_000;
const MAX_ENTRIES = quick ? 10_000 : 50_000;
const HANDLER_ID = 'PaymentHandlers.onSucceeded';
const LEASE_MS = 300_000;
const RETENTION_MS = 259_200_000;
const MB = 2 ** 20;

/** A delivery's event as the receiver parses it (fresh id), the raw body left to the GC. */
function receivedEvent() {
  return JSON.parse(Buffer.from(signedDelivery().body).toString('utf8'));
}

function settledHeap() {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heapUsed, arrayBuffers };
}

async function retained(count = RETAINED) {
  const before = settledHeap();
  // The default store holds 100k; a larger count gets a store that size (how memory grows with ids).
  const store = count > 100_000 ? new MemoryIdempotencyStore({ maxEntries: count }) : new MemoryIdempotencyStore();
  for (let i = 0; i < count; i++) {
    const key = `${receivedEvent().id}:${HANDLER_ID}`;
    const claim = await store.claim(key, LEASE_MS);
    if (claim.status !== 'claimed') throw new Error(`unexpected claim ${claim.status}`);
    await store.complete(key, claim.token, RETENTION_MS);
  }
  const after = settledHeap();
  // Keep `store` reachable until after the measurement (V8 may free what a dead variable holds).
  if (store.size !== count) throw new Error(`store holds ${store.size}, expected ${count}`);
  return {
    events: count,
    storeSize: store.size,
    heapMB: round((after.heapUsed - before.heapUsed) / MB, 2),
    arrayBuffersMB: round((after.arrayBuffers - before.arrayBuffers) / MB, 2),
    bytesPerEvent: Math.round((after.heapUsed - before.heapUsed) / count),
  };
}

async function steadyState() {
  let handled = 0;
  class PaymentHandlers {
    onSucceeded() {
      handled++;
    }
  }
  decorateMethod(PaymentHandlers, 'onSucceeded', OnPaymentEvent(EVENT_TYPE));
  decorateClass(PaymentHandlers, Injectable());
  const store = new MemoryIdempotencyStore({ maxEntries: MAX_ENTRIES });
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
  const dispatcher = app.get(PaymentEventsDispatcher);
  const samples = [];
  const start = settledHeap();
  for (let i = 1; i <= DELIVERIES; i++) {
    const event = receivedEvent();
    const result = await dispatcher.dispatch(event, { receivedAt: new Date() });
    if (result.outcome !== 'handled') throw new Error(`delivery ${i}: ${result.outcome}`);
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
    handled,
    storeSize: last.storeSize,
    heapMB: last.heapMB,
    growthSecondHalfMB: round(last.heapMB - half.heapMB, 2),
    samples,
  };
}

// --growth: retained heap for 10k, 100k and 1M ids (issue 22, item 5), printed as JSON.
if (process.argv.includes('--growth')) {
  const points = [];
  for (const count of [10_000, 100_000, 1_000_000]) points.push(await retained(count));
  console.log(JSON.stringify({ retainedGrowth: points }));
  process.exit(0);
}
const result = { retained: await retained(), steadyState: await steadyState() };
if (process.send) process.send({ type: 'memory-result', result });
else console.log(JSON.stringify(result, null, 2));
