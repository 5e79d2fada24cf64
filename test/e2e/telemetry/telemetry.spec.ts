import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { PaymentsModule, PaymentsService, type PaymentEvent } from '../../../lib/index.js';
import { PaymentsTelemetry } from '../../../lib/telemetry/payments.telemetry.js';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';
import { LeakAudit } from '../../chaos/support/leak-audit.js';
import {
  OtelTestSdk,
  childrenOf,
  exportedTexts,
  instrumentHttpServer,
  only,
  renderTraceTree,
  toWaterfall,
} from '../../fixtures/telemetry/otel-sdk.fixture.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { ControllableIdempotencyStore } from '../../fixtures/webhooks/controllable-idempotency.store.js';
import { startIntentsServer, type IntentsServer } from '../../fixtures/webhooks/intents-server.fixture.js';
import {
  FulfilmentHandler,
  PAYMENT_HANDLER_FIXTURES,
  PaymentAuditHandler,
} from '../../fixtures/webhooks/payment-handlers.fixture.js';
import {
  API_KEY,
  CURRENT_SECRET,
  ENDPOINT_ID,
  FOREIGN_SECRET,
  PREVIOUS_SECRET,
  fixtureOptions,
  post,
  sign,
  startWebhookApp,
  type AdapterName,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';

const PATH = 'payments/webhooks';
/** A text that only the request body carries: no attribute may contain it. */
const BODY_MARKER = 'order-body-marker-7f3a9c1e5b';

const sdk = new OtelTestSdk();
let intents: IntentsServer;

beforeAll(async () => {
  intents = await startIntentsServer();
});
afterAll(async () => {
  await intents.close();
  await sdk.shutdown();
});

function paymentSucceeded(): PaymentEvent<'payment_intent.succeeded'> {
  return createPaymentEvent('payment_intent.succeeded', { webhook_id: ENDPOINT_ID, metadata: { order: BODY_MARKER } });
}

const isDelivery = (span: ReadableSpan): boolean => span.name === 'payments.webhook.delivery';
const isHandler = (span: ReadableSpan): boolean => span.name === 'payments.handler';
const ofEvent =
  (eventId: string) =>
  (span: ReadableSpan): boolean =>
    span.attributes['payments.event.id'] === eventId;

/** The spans of the delivery whose HTTP server span is `server` (the trace of one request). */
function traceOf(spans: ReadableSpan[], delivery: ReadableSpan): ReadableSpan[] {
  return spans.filter((span) => span.spanContext().traceId === delivery.spanContext().traceId);
}

describe.each(['express', 'fastify'] as const)('OpenTelemetry spans and metrics on %s', (adapter: AdapterName) => {
  const logger = new CapturingLogger();
  let main: WebhookApp;
  let url: string;
  let fulfilment: FulfilmentHandler;
  let audit: PaymentAuditHandler;
  const signatures: string[] = [];
  const store = new ControllableIdempotencyStore();

  beforeAll(async () => {
    await sdk.resetMetrics();
    main = await startWebhookApp({
      adapter,
      logger,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(
        fixtureOptions({ endpointIds: [ENDPOINT_ID], requireHttps: false, store }, intents.baseUrl),
      ),
    });
    instrumentHttpServer(main.app.getHttpServer() as Server);
    url = `${main.baseUrl}/${PATH}`;
    fulfilment = main.app.get(FulfilmentHandler);
    audit = main.app.get(PaymentAuditHandler);
  });
  afterAll(async () => {
    await main.close();
  });
  beforeEach(() => {
    sdk.exporter.reset();
    fulfilment.reset();
    audit.reset();
  });

  async function deliver(event: object, secret = CURRENT_SECRET): Promise<{ status: number; spans: ReadableSpan[] }> {
    const signed = sign(event, { secret });
    // The signature header (webhook-id is the event id, which spans carry on purpose).
    signatures.push(
      ...Object.entries(signed.headers)
        .filter(([name]) => /signature/i.test(name))
        .map(([, value]) => value),
    );
    const answer = await post(url, signed);
    // The server span ends on 'finish', which may follow the client's read by a tick: poll, never sleep.
    for (let i = 0; i < 200 && !sdk.spans().some((span) => span.kind === SpanKind.SERVER); i++)
      await new Promise((r) => setImmediate(r));
    return { status: answer.status, spans: sdk.spans() };
  }

  it('loads @opentelemetry/api at boot', () => {
    expect(main.app.get(PaymentsTelemetry).enabled).toBe(true);
  });

  it('handled: a delivery span under the HTTP server span, one handler span per handler, and the client call under its handler', async () => {
    fulfilment.behaviour = async (_event, ctx) => {
      await ctx.retrieveIntent();
    };
    const event = paymentSucceeded();
    const { status, spans } = await deliver(event);
    expect(status).toBe(200);

    const delivery = only(spans, isDelivery, 'delivery');
    const server = only(spans, (span) => span.kind === SpanKind.SERVER, 'HTTP server');
    expect(delivery.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    expect(delivery.spanContext().traceId).toBe(server.spanContext().traceId);
    expect(delivery.attributes).toMatchObject({
      'payments.event.id': event.id,
      'payments.event.type': 'payment_intent.succeeded',
      'payments.webhook.verification': 'valid',
      'payments.webhook.outcome': 'handled',
      'http.response.status_code': 200,
    });
    expect(delivery.status.code).toBe(SpanStatusCode.UNSET);

    const handlers = childrenOf(spans, delivery).filter(isHandler);
    expect(handlers.map((span) => span.attributes['payments.handler.id']).sort()).toEqual([
      'FulfilmentHandler.paid',
      'PaymentAuditHandler.audit',
    ]);
    for (const handler of handlers) {
      expect(handler.attributes).toMatchObject({
        'payments.handler.result': 'done',
        'payments.handler.attempt': 1,
        'payments.event.id': event.id,
      });
      expect(typeof handler.attributes['payments.handler.duration_ms']).toBe('number');
    }

    const fulfilmentSpan = only(
      handlers,
      (span) => span.attributes['payments.handler.id'] === 'FulfilmentHandler.paid',
      'fulfilment handler',
    );
    const call = only(childrenOf(spans, fulfilmentSpan), (span) => span.kind === SpanKind.CLIENT, 'client call');
    expect(call.name).toBe('GET /payment_intents/{id}');
    expect(call.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.template': '/payment_intents/{id}',
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
      'payments.client.attempts': 1,
    });
  });

  it('duplicate: the redelivery span says duplicate and each handler span says skipped', async () => {
    const event = paymentSucceeded();
    expect((await deliver(event)).status).toBe(200);
    sdk.exporter.reset();
    const { status, spans } = await deliver(event);
    expect(status).toBe(200);
    const delivery = only(spans, isDelivery, 'delivery');
    expect(delivery.attributes['payments.webhook.outcome']).toBe('duplicate');
    const handlers = childrenOf(spans, delivery).filter(isHandler);
    expect(handlers).toHaveLength(2);
    expect(handlers.map((span) => span.attributes['payments.handler.result'])).toEqual(['skipped', 'skipped']);
    expect(handlers.every((span) => span.attributes['payments.handler.attempt'] === undefined)).toBe(true);
  });

  it('refused: a forged delivery ends its span with the reason, carries no event id and runs no handler', async () => {
    const event = paymentSucceeded();
    const { status, spans } = await deliver(event, FOREIGN_SECRET);
    expect(status).toBe(401);
    const delivery = only(spans, isDelivery, 'delivery');
    expect(delivery.attributes).toMatchObject({
      'payments.webhook.outcome': 'rejected',
      'payments.webhook.rejection_reason': 'invalid_signature',
      'payments.webhook.verification': 'invalid_signature',
      'http.response.status_code': 401,
    });
    // An unverified body is not trusted even for its id.
    expect(delivery.attributes['payments.event.id']).toBeUndefined();
    expect(spans.filter(isHandler)).toEqual([]);
    expect(delivery.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('failed: the handler span and the delivery span are errors, with the error class and never its message', async () => {
    fulfilment.behaviour = () => {
      throw new TypeError(`handler broke on ${BODY_MARKER}`);
    };
    const event = paymentSucceeded();
    const { status, spans } = await deliver(event);
    expect(status).toBe(500);
    const delivery = only(spans, isDelivery, 'delivery');
    expect(delivery.attributes).toMatchObject({
      'payments.webhook.outcome': 'failed',
      'http.response.status_code': 500,
      'error.type': 'failed',
    });
    expect(delivery.status.code).toBe(SpanStatusCode.ERROR);
    const failed = only(
      childrenOf(spans, delivery),
      (span) => span.attributes['payments.handler.id'] === 'FulfilmentHandler.paid',
      'failed handler',
    );
    expect(failed.attributes).toMatchObject({
      'payments.handler.result': 'failed',
      'payments.handler.attempt': 1,
      'error.type': 'TypeError',
    });
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TypeError' });
    const other = only(
      childrenOf(spans, delivery),
      (span) => span.attributes['payments.handler.id'] === 'PaymentAuditHandler.audit',
      'audit handler',
    );
    expect(other.attributes['payments.handler.result']).toBe('done');

    // The redelivery runs only the failed handler again: attempt 2.
    fulfilment.behaviour = () => undefined;
    sdk.exporter.reset();
    const retry = await deliver(event);
    expect(retry.status).toBe(200);
    const handlers = retry.spans.filter(isHandler).filter(ofEvent(event.id));
    expect(
      handlers
        .map((span) => [
          span.attributes['payments.handler.id'],
          span.attributes['payments.handler.result'],
          span.attributes['payments.handler.attempt'],
        ])
        .sort(),
    ).toEqual([
      ['FulfilmentHandler.paid', 'done', 2],
      ['PaymentAuditHandler.audit', 'skipped', undefined],
    ]);
  });

  it('metrics after the scripted sequence: deliveries by outcome and status, rejections by reason, handler durations by handler and result', async () => {
    // This describe block's tests so far: handled (1), duplicate (1 handled + 1 duplicate), refused (1), failed (1 failed + 1 handled).
    const deliveries = await sdk.points('payments.webhook.deliveries');
    const count = (outcome: string, status: number): number =>
      deliveries.find(
        (p) =>
          p.attributes['payments.webhook.outcome'] === outcome && p.attributes['http.response.status_code'] === status,
      )?.value ?? 0;
    expect([count('handled', 200), count('duplicate', 200), count('rejected', 401), count('failed', 500)]).toEqual([
      3, 1, 1, 1,
    ]);
    expect(deliveries.reduce((sum, p) => sum + p.value, 0)).toBe(6);

    const rejections = await sdk.points('payments.webhook.rejections');
    expect(
      rejections.map((p) => [
        p.attributes['payments.webhook.rejection_reason'],
        p.attributes['http.response.status_code'],
        p.value,
      ]),
    ).toEqual([['invalid_signature', 401, 1]]);

    const durations = await sdk.points('payments.handler.duration');
    const runs = (handler: string, result: string): number | undefined =>
      durations.find(
        (p) => p.attributes['payments.handler.id'] === handler && p.attributes['payments.handler.result'] === result,
      )?.count;
    // Fulfilment: done in handled, duplicate's first delivery and the failed event's redelivery; failed once.
    expect([
      runs('FulfilmentHandler.paid', 'done'),
      runs('FulfilmentHandler.paid', 'failed'),
      runs('PaymentAuditHandler.audit', 'done'),
    ]).toEqual([3, 1, 3]);
    const metric = (await sdk.collect()).get('payments.handler.duration');
    expect(metric?.descriptor.unit).toBe('s');

    // The handled test's retrieveIntent: one client call, one HTTP request, no retry.
    const requests = await sdk.points('payments.client.requests');
    expect(
      requests.map((p) => [p.attributes['url.template'], p.attributes['http.response.status_code'], p.value]),
    ).toEqual([['/payment_intents/{id}', 200, 1]]);
    expect(await sdk.points('payments.client.retries')).toEqual([]);
    expect(await sdk.points('payments.store.errors')).toEqual([]);
  });

  it('store down: 503 store_unavailable on an error delivery span, handler spans say why, payments.store.errors counts the claims', async () => {
    store.down = true;
    try {
      const { status, spans } = await deliver(paymentSucceeded());
      expect(status).toBe(503);
      const delivery = only(spans, isDelivery, 'delivery');
      expect(delivery.attributes).toMatchObject({
        'payments.webhook.outcome': 'store_unavailable',
        'error.type': 'store_unavailable',
      });
      expect(delivery.status.code).toBe(SpanStatusCode.ERROR);
      const handlers = childrenOf(spans, delivery).filter(isHandler);
      expect(
        handlers.map((span) => [span.attributes['payments.handler.result'], span.attributes['error.type']]),
      ).toEqual([
        ['store_unavailable', 'Error'],
        ['store_unavailable', 'Error'],
      ]);
    } finally {
      store.down = false;
    }
    const errors = await sdk.points('payments.store.errors');
    expect(errors.map((p) => [p.attributes['payments.store.operation'], p.value])).toEqual([['claim', 2]]);
  });

  it('no key, secret, signature or body text in any exported span, event, link or metric attribute', async () => {
    // One more delivery of each kind, with everything exported so far kept.
    await deliver(paymentSucceeded());
    await deliver(paymentSucceeded(), FOREIGN_SECRET);
    const audit = new LeakAudit()
      .addApiKey('api key', API_KEY)
      .addWebhookSecret('current secret', CURRENT_SECRET)
      .addWebhookSecret('previous secret', PREVIOUS_SECRET)
      .addWebhookSecret('foreign secret', FOREIGN_SECRET)
      .addApiKey('body marker', BODY_MARKER);
    for (const [index, signature] of signatures.entries()) audit.addApiKey(`header value ${index}`, signature);
    // The audit itself finds a planted key (so an empty result means something).
    const canary = new LeakAudit().addApiKey('api key', API_KEY);
    canary.scan(`http.request.header.x-api-key=["${API_KEY}"]`, 'planted');
    expect(canary.hits).toHaveLength(1);
    const texts = exportedTexts(sdk.spans(), (await sdk.collect()).values());
    for (const { text, source } of texts) audit.scan(text, source);
    expect(texts.length).toBeGreaterThan(20);
    expect(audit.hits).toEqual([]);
  });
});

describe('OpenTelemetry spans of a client call with retries', () => {
  let server: Server;
  let baseUrl: string;
  let answers: number[];
  let main: WebhookApp;
  const waits: number[] = [];

  beforeAll(async () => {
    await sdk.resetMetrics();
    server = createServer((request, response) => {
      const status = answers.shift() ?? 200;
      if (status === 429)
        response
          .writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' })
          .end('{"error":"slow down"}');
      else
        response
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: request.url?.split('/').pop(), state: 'succeeded' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    main = await startWebhookApp({
      adapter: 'express',
      logger: new CapturingLogger(),
      // Waits are recorded, not slept: the clock is injected.
      payments: PaymentsModule.forRoot({
        ...fixtureOptions(false, baseUrl),
        runtime: { now: () => Date.now(), random: () => 0.5, sleep: async (ms: number) => void waits.push(ms) },
      }),
    });
  });
  afterAll(async () => {
    await main.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('[L1] one CLIENT span per logical call, with its attempts, resend count, retry waits as events, and the metrics per attempt', async () => {
    answers = [429, 429, 200];
    sdk.exporter.reset();
    const id = '0b4c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d';
    await main.app.get(PaymentsService).paymentIntents.retrieve(id);
    const call = only(sdk.spans(), (span) => span.kind === SpanKind.CLIENT, 'client call');
    expect(call.name).toBe('GET /payment_intents/{id}');
    expect(call.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.template': '/payment_intents/{id}',
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
      'payments.client.attempts': 3,
      'http.request.resend_count': 2,
      'payments.client.retry_wait_ms': 4000,
    });
    expect(
      call.events.map((event) => [
        event.name,
        event.attributes?.['payments.client.retry_reason'],
        event.attributes?.['payments.client.retry_wait_ms'],
      ]),
    ).toEqual([
      ['payments.client.retry', '429', 2000],
      ['payments.client.retry', '429', 2000],
    ]);
    expect(waits).toEqual([2000, 2000]);
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    expect(JSON.stringify(call.attributes)).not.toContain(id);

    const durations = await sdk.points('http.client.request.duration');
    const byStatus = durations
      .map((p) => [p.attributes['http.response.status_code'], p.attributes['error.type'], p.count])
      .sort();
    expect(byStatus).toEqual([
      [200, undefined, 1],
      [429, '429', 2],
    ]);
    const retries = await sdk.points('payments.client.retries');
    expect(retries.map((p) => [p.attributes['payments.client.retry_reason'], p.value])).toEqual([['429', 2]]);
    const requests = await sdk.points('payments.client.requests');
    expect(
      requests.map((p) => [p.attributes['http.response.status_code'], p.attributes['error.type'], p.value]),
    ).toEqual([[200, undefined, 1]]);
  });

  it('a call that ends in an error status is an error span with error.type', async () => {
    answers = [429, 429, 429, 429, 429, 429];
    sdk.exporter.reset();
    await expect(
      main.app.get(PaymentsService).paymentIntents.retrieve('0b4c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2e'),
    ).rejects.toMatchObject({ status: 429 });
    const call = only(sdk.spans(), (span) => span.kind === SpanKind.CLIENT, 'client call');
    expect(call.attributes).toMatchObject({ 'http.response.status_code': 429, 'error.type': '429' });
    expect(call.status).toEqual({ code: SpanStatusCode.ERROR, message: '429' });
  });
});

describe('rendered trace tree (docs/observability.md)', () => {
  it('prints the tree of a handled delivery whose handler calls the API', async () => {
    await sdk.resetMetrics();
    const main = await startWebhookApp({
      adapter: 'express',
      logger: new CapturingLogger(),
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(fixtureOptions({ requireHttps: false }, intents.baseUrl)),
    });
    try {
      instrumentHttpServer(main.app.getHttpServer() as Server);
      main.app.get(FulfilmentHandler).behaviour = async (_event, ctx) => void (await ctx.retrieveIntent());
      sdk.exporter.reset();
      const signed = signWebhook(paymentSucceeded(), { scheme: 'standard-webhooks', secret: CURRENT_SECRET });
      expect((await post(`${main.baseUrl}/${PATH}`, signed)).status).toBe(200);
      for (let i = 0; i < 200 && !sdk.spans().some((span) => span.kind === SpanKind.SERVER); i++)
        await new Promise((r) => setImmediate(r));
      const delivery = only(sdk.spans(), isDelivery, 'delivery');
      const tree = renderTraceTree(traceOf(sdk.spans(), delivery));
      if (process.env.PRINT_TRACE_TREE) process.stdout.write(`${tree}\n`);
      // For docs/observability-trace.png (test/fixtures/telemetry/trace-screenshot.mjs renders it).
      if (process.env.TRACE_JSON_OUT)
        writeFileSync(process.env.TRACE_JSON_OUT, JSON.stringify(toWaterfall(traceOf(sdk.spans(), delivery))));
      // Each line up to its kind: indentation is depth, handlers in start order.
      const shape = tree.split('\n').map((line) => line.replace(/\] .*$/, ']'));
      expect([...shape].sort()).toEqual(
        [
          'POST [SERVER]',
          '  └─ payments.webhook.delivery [INTERNAL]',
          '    └─ payments.handler [INTERNAL]',
          '    └─ payments.handler [INTERNAL]',
          '      └─ GET /payment_intents/{id} [CLIENT]',
        ].sort(),
      );
      expect(shape[shape.indexOf('      └─ GET /payment_intents/{id} [CLIENT]') - 1]).toBe(
        '    └─ payments.handler [INTERNAL]',
      );
      expect(tree).toContain(
        'payments.handler.id=FulfilmentHandler.paid payments.handler.attempt=1 payments.handler.result=done\n      └─ GET',
      );
    } finally {
      await main.close();
    }
  });
});
