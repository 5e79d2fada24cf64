import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { PaymentsHealthModule } from '../../../lib/health/index.js';
import {
  MemoryIdempotencyStore,
  OnPaymentEvent,
  PaymentsModule,
  standardWebhooksVerifier,
  type PaymentEvent,
} from '../../../lib/index.js';
import {
  PaymentsAttributes,
  PaymentsMetricNames,
  PaymentsSpanNames,
} from '../../../lib/telemetry/payments-telemetry.names.js';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';
import { getHealth, HealthController } from '../../fixtures/health/health-app.fixture.js';
import { OtelTestSdk } from '../../fixtures/telemetry/otel-sdk.fixture.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { post, type AdapterName } from '../../fixtures/webhooks/webhook-app.fixture.js';

/*
 * With several instances, what a person reads names the instance (issue 20, item 5): the receiver's
 * log lines of the route of 'eu' carry the context `PaymentsWebhooks:eu` (the unnamed instance's keep
 * `PaymentsWebhooks`), the wrong-secret warning names the route as served (global prefix included),
 * the health check covers every instance's store and names the one that is down, and spans and metrics
 * of 'eu' carry `payments.instance: 'eu'`.
 */
const SECRET = `whsec_${Buffer.from('default-account-secret-32-bytes!').toString('base64')}`;
const EU_SECRET = `whsec_${Buffer.from('eu-account-endpoint-secret-32byt').toString('base64')}`;
const FORGED = `whsec_${Buffer.from('nobody-knows-this-secret-32bytes').toString('base64')}`;

/** The memory store, with a ping the test can fail (the engine of 'eu' is down). */
class SwitchableStore extends MemoryIdempotencyStore {
  down = false;
  ping(): Promise<void> {
    return this.down
      ? Promise.reject(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))
      : Promise.resolve();
  }
}

@Injectable()
class Handlers {
  @OnPaymentEvent('payment_intent.succeeded')
  paid(): void {}

  @OnPaymentEvent('payment_intent.succeeded', { instance: 'eu' })
  paidInEurope(event: PaymentEvent<'payment_intent.succeeded'>): void {
    if ((event.metadata as Record<string, unknown> | null)?.['fail'] === 'always') throw new Error('asked to fail');
  }
}

const sdk = new OtelTestSdk(); // before any app boots: the module creates its instruments at boot
afterAll(async () => {
  await sdk.shutdown();
});

describe.each(['express', 'fastify'] as const)('named instance observability on %s', (adapterName: AdapterName) => {
  const logger = new CapturingLogger();
  const euStore = new SwitchableStore();
  let app: INestApplication;
  let base: string;

  const deliver = (path: string, event: PaymentEvent, secret: string) =>
    post(`${base}/api/${path}`, signWebhook(event, { scheme: 'standard-webhooks', secret }));
  const linesOf = (context: string, level: string) =>
    logger.lines.filter((line) => line.context === context && line.level === level).map((line) => line.message);

  beforeAll(async () => {
    await sdk.resetMetrics();
    const instance = (name: string | undefined, path: string, secrets: string, store?: MemoryIdempotencyStore) =>
      PaymentsModule.forRoot({
        ...(name ? { name } : {}),
        apiKey: `sk_test_${name ?? 'default'}_account_key`,
        environment: 'sandbox',
        baseUrl: 'http://127.0.0.1:9',
        allowInsecureHttp: true,
        webhooks: { path, verifier: standardWebhooksVerifier({ secrets }), ...(store ? { store } : {}) },
      });
    @Module({
      imports: [
        instance(undefined, 'payments/webhooks', SECRET),
        instance('eu', 'payments/eu/webhooks', EU_SECRET, euStore),
        PaymentsHealthModule,
      ],
      controllers: [HealthController],
      providers: [Handlers],
    })
    class ObservedAppModule {}
    const adapter = adapterName === 'express' ? new ExpressAdapter() : new FastifyAdapter();
    app = await NestFactory.create(ObservedAppModule, adapter, { rawBody: true, logger, abortOnError: false });
    app.setGlobalPrefix('api');
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it("names 'eu' on its route's rejected, duplicate and failed-handler lines; the unnamed instance's lines are unchanged", async () => {
    const forged = createPaymentEvent('payment_intent.succeeded');
    expect((await deliver('payments/eu/webhooks', forged, FORGED)).status).toBe(401);
    expect((await deliver('payments/webhooks', forged, FORGED)).status).toBe(401);
    expect(linesOf('PaymentsWebhooks:eu', 'warn').some((m) => m.startsWith('Rejected delivery with 401'))).toBe(true);
    expect(linesOf('PaymentsWebhooks', 'warn').some((m) => m.startsWith('Rejected delivery with 401'))).toBe(true);

    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await deliver('payments/eu/webhooks', event, EU_SECRET)).status).toBe(200);
    expect((await deliver('payments/eu/webhooks', event, EU_SECRET)).status).toBe(200);
    expect(
      linesOf('PaymentsWebhooks:eu', 'log').some((m) => m.includes(`${event.id}`) && m.includes('duplicate')),
    ).toBe(true);

    const failing = createPaymentEvent('payment_intent.succeeded', { metadata: { fail: 'always' } });
    expect((await deliver('payments/eu/webhooks', failing, EU_SECRET)).status).toBe(500);
    expect(linesOf('PaymentsWebhooks:eu', 'error').some((m) => m.startsWith(`Failed event ${failing.id}`))).toBe(true);
    expect(logger.text()).not.toContain('sk_test_eu_account_key');
  });

  it('says where a run of wrong signatures went, as served with the global prefix', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await deliver('payments/eu/webhooks', createPaymentEvent('charge.succeeded'), FORGED)).status).toBe(401);
    }
    const warning = linesOf('PaymentsWebhooks:eu', 'warn').find((m) => m.includes('failed the signature check'));
    expect(warning).toContain('to /api/payments/eu/webhooks failed');
  });

  it("checks every instance's store: 503 naming 'eu' when its store is down, 200 when it is back", async () => {
    euStore.down = true;
    const down = await getHealth(`${base}/api`);
    expect(down.status).toBe(503);
    const payments = (down.body['details'] as Record<string, Record<string, unknown>>)['payments']!;
    expect(payments['store']).toMatchObject({ status: 'up' });
    expect(payments['instances']).toEqual({
      eu: {
        status: 'down',
        store: { status: 'down', store: 'SwitchableStore', error: 'Error ECONNREFUSED' },
        queue: { status: 'up', mode: 'inline' },
      },
    });
    euStore.down = false;
    const up = await getHealth(`${base}/api`);
    expect(up.status).toBe(200);
    expect((up.body['details'] as Record<string, Record<string, unknown>>)['payments']!['instances']).toMatchObject({
      eu: { status: 'up' },
    });
  });

  it("puts payments.instance 'eu' on the spans and metrics of 'eu', none on the unnamed instance's", async () => {
    const eu = createPaymentEvent('payment_intent.succeeded');
    const unnamed = createPaymentEvent('payment_intent.succeeded');
    expect((await deliver('payments/eu/webhooks', eu, EU_SECRET)).status).toBe(200);
    expect((await deliver('payments/webhooks', unnamed, SECRET)).status).toBe(200);
    const handlerSpan = (eventId: string) =>
      sdk
        .spans()
        .find(
          (span) => span.name === PaymentsSpanNames.handler && span.attributes[PaymentsAttributes.eventId] === eventId,
        );
    expect(handlerSpan(eu.id)?.attributes[PaymentsAttributes.instance]).toBe('eu');
    expect(handlerSpan(unnamed.id)).toBeDefined();
    expect(handlerSpan(unnamed.id)!.attributes[PaymentsAttributes.instance]).toBeUndefined();

    const deliveries = await sdk.points(PaymentsMetricNames.deliveries);
    const handled = (instance: string | undefined) =>
      deliveries
        .filter(
          (p) =>
            p.attributes[PaymentsAttributes.instance] === instance &&
            p.attributes['payments.webhook.outcome'] === 'handled',
        )
        .reduce((sum, p) => sum + p.value, 0);
    expect(handled('eu')).toBeGreaterThanOrEqual(1);
    expect(handled(undefined)).toBeGreaterThanOrEqual(1);
  });
});
