import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import {
  hmacVerifier,
  OnPaymentEvent,
  PaymentsConfigurationError,
  PaymentsModule,
  PaymentsWebhooksModule,
  standardWebhooksVerifier,
  type PaymentEvent,
} from '../../../lib/index.js';
import { PaymentsHealthIndicator, PaymentsHealthModule } from '../../../lib/health/index.js';
import { PaymentEventsRegistry } from '../../../lib/webhooks/index.js';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';
import { post, type AdapterName } from '../../fixtures/webhooks/webhook-app.fixture.js';

/*
 * The receiver registered apart, the way @nestjs/bullmq registers a queue (issue 21, item 3): the
 * structure (instance, route, inline or queued) is declared in `PaymentsWebhooksModule.register[Async]`,
 * and the values (verifier, secrets, store) come from the options or from a factory that cannot change
 * the structure. The PaymentsModule of the instance is registered with `webhooks: false`.
 */
const SECRET = `whsec_${Buffer.from('receiver-registered-apart-secret').toString('base64')}`;
const EU_SECRET = 'eu-hmac-secret-from-configuration';
const CLIENT = {
  apiKey: 'sk_test_webhooks_module_key',
  environment: 'sandbox',
  baseUrl: 'https://payments.invalid',
} as const;

const runs: Array<{ handler: string; id: string }> = [];

@Injectable()
class Handlers {
  @OnPaymentEvent('payment_intent.succeeded')
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    runs.push({ handler: 'paid', id: event.id });
  }

  @OnPaymentEvent('payment_intent.succeeded', { instance: 'eu' })
  paidInEurope(event: PaymentEvent<'payment_intent.succeeded'>): void {
    runs.push({ handler: 'paidInEurope', id: event.id });
  }
}

/** What a configuration module would provide: the EU secret, read when the factory runs. */
const EU_WEBHOOK_SECRET = 'EU_WEBHOOK_SECRET';
@Module({ providers: [{ provide: EU_WEBHOOK_SECRET, useValue: EU_SECRET }], exports: [EU_WEBHOOK_SECRET] })
class SecretsModule {}

@Module({
  imports: [
    PaymentsModule.forRoot({ ...CLIENT, webhooks: false }),
    PaymentsWebhooksModule.register({ path: 'hooks/default', verifier: standardWebhooksVerifier({ secrets: SECRET }) }),
    PaymentsModule.forRoot({ ...CLIENT, name: 'eu', webhooks: false }),
    PaymentsWebhooksModule.registerAsync({
      name: 'eu',
      path: 'hooks/eu',
      imports: [SecretsModule],
      inject: [EU_WEBHOOK_SECRET],
      useFactory: (secret: string) => ({ verifier: hmacVerifier({ secrets: secret, header: 'x-signature' }) }),
    }),
    PaymentsHealthModule,
  ],
  providers: [Handlers],
})
class RegisteredApartModule {}

describe.each(['express', 'fastify'] as const)('PaymentsWebhooksModule on %s', (adapterName: AdapterName) => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    const adapter = adapterName === 'express' ? new ExpressAdapter() : new FastifyAdapter();
    app = await NestFactory.create(RegisteredApartModule, adapter, { rawBody: true, logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('register: a verified delivery runs the handler once; a redelivery is a duplicate; a forged one is 401', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const signed = signWebhook(event, { scheme: 'standard-webhooks', secret: SECRET });
    expect(await post(`${base}/hooks/default`, signed)).toMatchObject({ status: 200, body: { outcome: 'handled' } });
    expect(await post(`${base}/hooks/default`, signed)).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });
    const forged = signWebhook(createPaymentEvent('payment_intent.succeeded'), {
      scheme: 'standard-webhooks',
      secret: `whsec_${Buffer.from('a-secret-nobody-configured-here!').toString('base64')}`,
    });
    expect((await post(`${base}/hooks/default`, forged)).status).toBe(401);
    expect(runs.filter((run) => run.id === event.id)).toEqual([{ handler: 'paid', id: event.id }]);
  });

  it("registerAsync: the factory's values (an HMAC secret from configuration) serve the named instance's route and handlers", async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const signed = signWebhook(event, { scheme: 'hmac', secret: EU_SECRET, header: 'x-signature' });
    expect(await post(`${base}/hooks/eu`, signed)).toMatchObject({ status: 200, body: { outcome: 'handled' } });
    expect(runs.filter((run) => run.id === event.id)).toEqual([{ handler: 'paidInEurope', id: event.id }]);
    // The unnamed instance's route does not know the EU scheme: its verifier refuses the delivery.
    expect((await post(`${base}/hooks/default`, signed)).status).toBe(401);
  });

  it('the unnamed receiver exports its registry under the class, as forRoot does', () => {
    expect(app.get(PaymentEventsRegistry).handledEventTypes()).toContain('payment_intent.succeeded');
  });

  it("the health check finds each instance's store in its receiver", async () => {
    const health = await app.get(PaymentsHealthIndicator).isHealthy();
    expect(health['payments']).toMatchObject({
      status: 'up',
      store: { status: 'up', store: 'MemoryIdempotencyStore' },
      instances: { eu: { status: 'up', store: { status: 'up', store: 'MemoryIdempotencyStore' } } },
    });
  });
});

describe('PaymentsWebhooksModule boot errors name the option and the fix', () => {
  let opened: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(opened.map((moduleRef) => moduleRef.close()));
    opened = [];
  });
  const boot = async (imports: DynamicModule[]) => {
    const moduleRef = await Test.createTestingModule({ imports, providers: [Handlers] }).compile();
    opened.push(moduleRef);
    await moduleRef.init();
    return moduleRef;
  };
  const verifier = standardWebhooksVerifier({ secrets: SECRET });

  it('a factory cannot change the structure: values.path is refused', async () => {
    await expect(
      boot([
        PaymentsModule.forRoot({ ...CLIENT, webhooks: false }),
        PaymentsWebhooksModule.registerAsync({
          path: 'hooks/a',
          useFactory: () => ({ verifier, path: 'hooks/b' }) as never,
        }),
      ]),
    ).rejects.toMatchObject({ constructor: PaymentsConfigurationError, option: 'PaymentsWebhooksModule values.path' });
  });

  it("processing 'queue' without values.queue is refused", async () => {
    await expect(
      boot([
        PaymentsModule.forRoot({ ...CLIENT, webhooks: false }),
        PaymentsWebhooksModule.registerAsync({ processing: 'queue', worker: false, useFactory: () => ({ verifier }) }),
      ]),
    ).rejects.toMatchObject({ constructor: PaymentsConfigurationError, option: 'PaymentsWebhooksModule values.queue' });
  });

  it('a receiver without its PaymentsModule instance is refused, naming the instance', async () => {
    await expect(
      boot([
        PaymentsModule.forRoot({ ...CLIENT, webhooks: false }),
        PaymentsWebhooksModule.register({ name: 'eu', path: 'hooks/eu', verifier }),
      ]),
    ).rejects.toThrow(/no PaymentsModule instance named 'eu'/);
  });

  it('a PaymentsModule that has a route of its own and a receiver registered apart is refused', async () => {
    await expect(
      boot([
        PaymentsModule.forRoot({ ...CLIENT, webhooks: { verifier } }),
        PaymentsWebhooksModule.register({ path: 'hooks/other', verifier }),
      ]),
    ).rejects.toMatchObject({ constructor: PaymentsConfigurationError, option: 'webhooks' });
  });

  it('a bad structure fails when the module is declared, before Nest builds anything', () => {
    expect(() => PaymentsWebhooksModule.register({ processing: 'later' as never, verifier })).toThrow(
      PaymentsConfigurationError,
    );
  });
});
