import 'reflect-metadata';
import type { Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Queue } from 'bullmq';
import { PaymentEventsQueue, PaymentsModule, type PaymentEvent } from '../../../lib/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import {
  OtelTestSdk,
  childrenOf,
  instrumentHttpServer,
  only,
  renderTraceTree,
} from '../../fixtures/telemetry/otel-sdk.fixture.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import {
  FulfilmentHandler,
  PAYMENT_HANDLER_FIXTURES,
  PaymentAuditHandler,
} from '../../fixtures/webhooks/payment-handlers.fixture.js';
import {
  fixtureOptions,
  post,
  sign,
  startWebhookApp,
  type AdapterName,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';
import { REDIS_URL, uniqueQueueName, waitFor } from '../redis-test.util.js';

const sdk = new OtelTestSdk();
afterAll(async () => {
  await sdk.shutdown();
});

const isDelivery = (span: ReadableSpan): boolean => span.name === 'payments.webhook.delivery';
const ofEvent =
  (eventId: string) =>
  (span: ReadableSpan): boolean =>
    span.attributes['payments.event.id'] === eventId || span.attributes['messaging.message.id'] === eventId;

/** Queued processing (`webhooks.processing: { queue }`) seen through OpenTelemetry: the hop across BullMQ. */
describe.each(['express', 'fastify'] as const)('OpenTelemetry across the queue on %s', (adapter: AdapterName) => {
  const queueName = uniqueQueueName(`otel-${adapter}`);
  let main: WebhookApp;
  let url: string;
  let fulfilment: FulfilmentHandler;

  beforeAll(async () => {
    await sdk.resetMetrics();
    main = await startWebhookApp({
      adapter,
      logger: new CapturingLogger(),
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(
        fixtureOptions({
          requireHttps: false,
          processing: {
            queue: {
              connection: { url: REDIS_URL },
              name: queueName,
              attempts: 1,
              backoff: { type: 'fixed', delay: 10 },
            },
          },
        }),
      ),
    });
    instrumentHttpServer(main.app.getHttpServer() as Server);
    url = `${main.baseUrl}/payments/webhooks`;
    fulfilment = main.app.get(FulfilmentHandler);
  });
  afterAll(async () => {
    await main.close();
    const cleaner = new Queue(queueName, { connection: { url: REDIS_URL } });
    await cleaner.obliterate({ force: true });
    await cleaner.close();
  });
  beforeEach(() => {
    fulfilment.reset();
    main.app.get(PaymentAuditHandler).reset();
  });

  /** Posts `event` and waits (polling) until the worker's span of it has ended. */
  async function deliverQueued(
    event: PaymentEvent,
  ): Promise<{ status: number; outcome: unknown; spans: ReadableSpan[] }> {
    const answer = await post(url, sign(event));
    const spans = await waitFor(
      () => {
        const found = sdk.spans().filter(ofEvent(event.id));
        return found.some((span) => span.kind === SpanKind.CONSUMER) &&
          sdk.spans().some((span) => span.kind === SpanKind.SERVER)
          ? sdk.spans()
          : undefined;
      },
      { what: `the process span of ${event.id}` },
    );
    return { status: answer.status, outcome: (answer.body as { outcome?: unknown }).outcome, spans };
  }

  it('[W3] queued: delivery -> send (PRODUCER) -> process (CONSUMER, child of send and linked to it) -> handler spans', async () => {
    sdk.exporter.reset();
    const event = createPaymentEvent('payment_intent.succeeded');
    const { status, outcome, spans } = await deliverQueued(event);
    expect([status, outcome]).toEqual([200, 'enqueued']);

    const delivery = only(spans, isDelivery, 'delivery');
    expect(delivery.attributes).toMatchObject({
      'payments.webhook.outcome': 'enqueued',
      'http.response.status_code': 200,
      'payments.event.id': event.id,
    });
    const send = only(childrenOf(spans, delivery), (span) => span.kind === SpanKind.PRODUCER, 'send');
    expect(send.name).toBe(`send ${queueName}`);
    expect(send.attributes).toMatchObject({
      'messaging.system': 'bullmq',
      'messaging.destination.name': queueName,
      'messaging.operation.type': 'send',
      'messaging.message.id': event.id,
      'payments.queue.outcome': 'enqueued',
    });

    const consumer = only(spans, (span) => span.kind === SpanKind.CONSUMER, 'process');
    expect(consumer.name).toBe(`process ${queueName}`);
    expect(consumer.spanContext().traceId).toBe(send.spanContext().traceId);
    expect(consumer.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(consumer.links.map((link) => link.context.spanId)).toEqual([send.spanContext().spanId]);
    expect(consumer.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'payments.queue.attempt': 1,
      'payments.webhook.outcome': 'handled',
    });

    const handlers = childrenOf(spans, consumer);
    expect(
      handlers
        .map((span) => [span.name, span.attributes['payments.handler.id'], span.attributes['payments.handler.result']])
        .sort(),
    ).toEqual([
      ['payments.handler', 'FulfilmentHandler.paid', 'done'],
      ['payments.handler', 'PaymentAuditHandler.audit', 'done'],
    ]);
    if (process.env.PRINT_TRACE_TREE)
      process.stdout.write(
        `${renderTraceTree(spans.filter((s) => s.spanContext().traceId === delivery.spanContext().traceId))}\n`,
      );
  });

  it('a redelivery of a queued event: the send span says duplicate and no second job runs', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    await deliverQueued(event);
    sdk.exporter.reset();
    const answer = await post(url, sign(event));
    expect(answer.status).toBe(200);
    const send = await waitFor(() => sdk.spans().find((span) => span.kind === SpanKind.PRODUCER), {
      what: 'the send span',
    });
    expect(send.attributes['payments.queue.outcome']).toBe('duplicate');
    expect(sdk.spans().filter((span) => span.kind === SpanKind.CONSUMER)).toEqual([]);
  });

  it('a job whose handler fails on its only attempt: an error process span, and payments.queue.failed_jobs counts it', async () => {
    fulfilment.behaviour = () => {
      throw new Error('fulfilment down');
    };
    sdk.exporter.reset();
    const event = createPaymentEvent('payment_intent.succeeded');
    const { spans } = await deliverQueued(event);
    const consumer = only(spans, (span) => span.kind === SpanKind.CONSUMER, 'process');
    expect(consumer.status).toEqual({ code: SpanStatusCode.ERROR, message: 'failed' });
    expect(consumer.attributes['error.type']).toBe('failed');

    const events = main.app.get(PaymentEventsQueue);
    await waitFor(async () => ((await events.failedCount()) === 1 ? true : undefined), { what: 'the failed set' });
    const gauge = await sdk.points('payments.queue.failed_jobs');
    expect(gauge.map((p) => [p.attributes['messaging.destination.name'], p.value])).toEqual([[queueName, 1]]);
  });
});
