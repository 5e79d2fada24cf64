/**
 * One cold start of bench/receive.bench.js, in a fresh process: from the process's start to the first
 * verified delivery handled (import, application context, the delivery), as a function instance would.
 *   kind 'ours': import nestjs-payments' serverless entry, createPaymentsWebhookHandler({ module }) over
 *                PaymentsModule (hmacVerifier, memory store) and one no-op handler, one synthetic HTTP API event;
 *   kind 'bare': a bare Nest application context (the same Nest, one provider), and by hand: the same HMAC
 *                in constant time, JSON.parse, a Map of ids, the handler called.
 * Reports the milliseconds since the process started (performance.now(): its time origin is the process's),
 * the import alone, and the heap after a full GC. Options: BENCH_COLD (JSON) { kind, lib }
 */
const importStart = performance.now();
await import('reflect-metadata');
const { createHmac, timingSafeEqual } = await import('node:crypto');
const { BENCH_SECRET, EVENT_TYPE, SIGNATURE_HEADER } = await import('../lib/bench-constants.js');
const { signedDelivery } = await import('../lib/signed-payloads.js');
const { decorateClass, decorateMethod } = await import('../lib/decorate.js');
const options = JSON.parse(process.env.BENCH_COLD);
const delivery = signedDelivery();
const event = {
  version: '2.0',
  headers: delivery.headers,
  body: Buffer.from(delivery.body).toString('base64'),
  isBase64Encoded: true,
};
let handled = 0;
const harnessMs = performance.now() - importStart;

let answer;
let importMs;
let close;
const t0 = performance.now();
if (options.kind === 'ours') {
  const { Injectable, Module } = await import('@nestjs/common');
  const lib = await import(options.lib);
  const { createPaymentsWebhookHandler } = await import(options.lib.replace(/index\.js$/, 'serverless/index.js'));
  importMs = performance.now() - t0;
  class Handlers {
    onSucceeded() {
      handled += 1;
    }
  }
  decorateMethod(Handlers, 'onSucceeded', lib.OnPaymentEvent(EVENT_TYPE));
  decorateClass(Handlers, Injectable());
  class FunctionModule {}
  decorateClass(
    FunctionModule,
    Module({
      imports: [
        lib.PaymentsModule.forRoot({
          apiKey: 'sk_test_bench',
          environment: 'sandbox',
          baseUrl: 'https://sandbox.payments.test',
          webhooks: {
            verifier: lib.hmacVerifier({ secrets: BENCH_SECRET, header: SIGNATURE_HEADER }),
            allowMemoryStoreInProduction: true,
          },
        }),
      ],
      providers: [Handlers],
    }),
  );
  const handler = createPaymentsWebhookHandler({ module: FunctionModule, contextOptions: { logger: false } });
  answer = await handler(event);
  close = () => handler.close();
} else {
  const { Injectable, Module } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  importMs = performance.now() - t0;
  class Handlers {
    onSucceeded() {
      handled += 1;
    }
  }
  decorateClass(Handlers, Injectable());
  class FunctionModule {}
  decorateClass(FunctionModule, Module({ providers: [Handlers] }));
  const app = await NestFactory.createApplicationContext(FunctionModule, { logger: false });
  const handlers = app.get(Handlers);
  const seen = new Map();
  // What a function over a bare context does by hand with the event.
  const body = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body);
  const given = event.headers[SIGNATURE_HEADER];
  const expected = createHmac('sha256', BENCH_SECRET).update(body).digest();
  const received = Buffer.from(given, 'hex');
  if (received.length === expected.length && timingSafeEqual(received, expected)) {
    const parsed = JSON.parse(body.toString('utf8'));
    if (!seen.has(parsed.id)) {
      seen.set(parsed.id, true);
      handlers.onSucceeded(parsed);
    }
    answer = { statusCode: 200, body: JSON.stringify({ received: true }) };
  } else answer = { statusCode: 401, body: '{}' };
  close = () => app.close();
}
const coldMs = performance.now();
if (answer.statusCode !== 200 || handled !== 1)
  throw new Error(`cold start ${options.kind}: answered ${answer.statusCode}, ${handled} run(s)`);
globalThis.gc?.();
const heapMB = process.memoryUsage().heapUsed / 1048576;
process.send({ type: 'done', coldMs, sinceImportsMs: coldMs - t0, importMs, harnessMs, heapMB });
await close();
process.exit(0);
