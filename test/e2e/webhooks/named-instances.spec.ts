import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Inject, Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import {
  getPaymentsServiceToken,
  InjectPaymentsService,
  MemoryIdempotencyStore,
  OnPaymentEvent,
  PaymentsModule,
  PaymentsService,
  standardWebhooksVerifier,
  type PaymentEvent,
  type PaymentEventContext,
} from '../../../lib/index.js';
import { getPaymentEventsRegistryToken, PaymentEventsRegistry } from '../../../lib/webhooks/index.js';
import { createPaymentEvent, signWebhook, type SignedWebhook } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { post, type AdapterName } from '../../fixtures/webhooks/webhook-app.fixture.js';

// Two accounts in one app: the unnamed instance (say, the direct account) and 'eu' (say, a Connect
// account), each with its own key, base address, route, endpoint secret and handlers. The two share
// one idempotency store, so the per-instance key prefix is what keeps their claims apart.
const DEFAULT_KEY = 'sk_test_default_account_key';
const EU_KEY = 'sk_test_eu_account_key';
const DEFAULT_SECRET = `whsec_${Buffer.from('default-account-secret-32-bytes!').toString('base64')}`;
const EU_SECRET = `whsec_${Buffer.from('eu-account-endpoint-secret-32byt').toString('base64')}`;
const DEFAULT_PATH = 'payments/webhooks';
const EU_PATH = 'payments/eu/webhooks';

/** A loopback stand-in for GET /payment_intents/{id} that records the key each request carried. */
interface KeyRecorder {
  baseUrl: string;
  keys: unknown[];
  close(): Promise<void>;
}

async function startKeyRecorder(): Promise<KeyRecorder> {
  const keys: unknown[] = [];
  const server: Server = createServer((req, res) => {
    keys.push(req.headers['x-api-key']);
    const id = /^\/payment_intents\/([0-9a-f-]{36})$/i.exec(req.url ?? '')?.[1];
    if (req.method !== 'GET' || !id) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ id, state: 'succeeded', amount: 100, capture_method: 'automatic' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    keys,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Which handler ran for which event id, in order. */
@Injectable()
class AccountHandlers {
  readonly runs: Array<{ handler: 'default' | 'eu'; eventId: string }> = [];

  @OnPaymentEvent('payment_intent.succeeded')
  async directPaid(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    await ctx.retrieveIntent();
    this.runs.push({ handler: 'default', eventId: event.id });
  }

  @OnPaymentEvent('payment_intent.succeeded', { instance: 'eu' })
  async euPaid(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    await ctx.retrieveIntent();
    this.runs.push({ handler: 'eu', eventId: event.id });
  }

  reset(): void {
    this.runs.length = 0;
  }
}

/** A service that holds both clients, the way an app injects them. */
@Injectable()
class Accounts {
  constructor(
    readonly direct: PaymentsService,
    @InjectPaymentsService('eu') readonly eu: PaymentsService,
  ) {}
}

/** Both registries, injected the way an app subscribes each endpoint to its handled events. */
@Injectable()
class Registries {
  constructor(
    readonly direct: PaymentEventsRegistry,
    @Inject(getPaymentEventsRegistryToken('eu')) readonly eu: PaymentEventsRegistry,
  ) {}
}

const signFor = (secret: string, event: PaymentEvent): SignedWebhook =>
  signWebhook(event, { scheme: 'standard-webhooks', secret });

describe.each(['express', 'fastify'] as const)('two named instances in one app on %s', (adapterName: AdapterName) => {
  const logger = new CapturingLogger();
  const sharedStore = new MemoryIdempotencyStore();
  let directService: KeyRecorder;
  let euService: KeyRecorder;
  let app: INestApplication;
  let base: string;
  let handlers: AccountHandlers;

  beforeAll(async () => {
    directService = await startKeyRecorder();
    euService = await startKeyRecorder();

    @Module({
      imports: [
        PaymentsModule.forRoot({
          apiKey: DEFAULT_KEY,
          environment: 'sandbox',
          baseUrl: directService.baseUrl,
          allowInsecureHttp: true,
          webhooks: {
            path: DEFAULT_PATH,
            verifier: standardWebhooksVerifier({ secrets: DEFAULT_SECRET }),
            store: sharedStore,
          },
        }),
        // The named instance through forRootAsync: name and route are static, the rest comes from the factory.
        PaymentsModule.forRootAsync({
          name: 'eu',
          receiver: { path: EU_PATH },
          useFactory: async () => ({
            apiKey: EU_KEY,
            environment: 'sandbox' as const,
            baseUrl: euService.baseUrl,
            allowInsecureHttp: true,
            webhooks: { path: EU_PATH, verifier: standardWebhooksVerifier({ secrets: EU_SECRET }), store: sharedStore },
          }),
        }),
      ],
      providers: [AccountHandlers, Accounts, Registries],
    })
    class TwoAccountsAppModule {}

    const adapter = adapterName === 'express' ? new ExpressAdapter() : new FastifyAdapter();
    app = await NestFactory.create(TwoAccountsAppModule, adapter, { rawBody: true, logger, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    handlers = app.get(AccountHandlers);
  });

  afterAll(async () => {
    await app?.close();
    await directService?.close();
    await euService?.close();
  });

  beforeEach(() => {
    handlers.reset();
    directService.keys.length = 0;
    euService.keys.length = 0;
  });

  it("[W4] a delivery to one route runs only that instance's handlers", async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    expect(await post(`${base}/${DEFAULT_PATH}`, signFor(DEFAULT_SECRET, event))).toEqual({
      status: 200,
      body: { received: true, outcome: 'handled' },
    });
    expect(handlers.runs).toEqual([{ handler: 'default', eventId: event.id }]);

    const euEvent = createPaymentEvent('payment_intent.succeeded');
    expect(await post(`${base}/${EU_PATH}`, signFor(EU_SECRET, euEvent))).toEqual({
      status: 200,
      body: { received: true, outcome: 'handled' },
    });
    expect(handlers.runs).toEqual([
      { handler: 'default', eventId: event.id },
      { handler: 'eu', eventId: euEvent.id },
    ]);
  });

  it('[W4] the same event id on both routes is two events, each exactly once (even with one shared store)', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await post(`${base}/${DEFAULT_PATH}`, signFor(DEFAULT_SECRET, event))).body).toEqual({
      received: true,
      outcome: 'handled',
    });
    expect((await post(`${base}/${EU_PATH}`, signFor(EU_SECRET, event))).body).toEqual({
      received: true,
      outcome: 'handled',
    });
    // Redeliveries on each route are duplicates of that route's event only.
    expect((await post(`${base}/${DEFAULT_PATH}`, signFor(DEFAULT_SECRET, event))).body).toEqual({
      received: true,
      outcome: 'duplicate',
    });
    expect((await post(`${base}/${EU_PATH}`, signFor(EU_SECRET, event))).body).toEqual({
      received: true,
      outcome: 'duplicate',
    });
    expect(handlers.runs).toEqual([
      { handler: 'default', eventId: event.id },
      { handler: 'eu', eventId: event.id },
    ]);
  });

  it('[W5][W7] each route verifies with its own secrets only: the other account’s signature is refused with 401', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await post(`${base}/${EU_PATH}`, signFor(DEFAULT_SECRET, event))).status).toBe(401);
    expect((await post(`${base}/${DEFAULT_PATH}`, signFor(EU_SECRET, event))).status).toBe(401);
    expect(handlers.runs).toEqual([]);
  });

  it('[A1] keys never cross: each client sends its own key to its own base address', async () => {
    const accounts = app.get(Accounts);
    const id = createPaymentEvent('payment_intent.succeeded').data.payment_intent!.id as string;
    await accounts.direct.paymentIntents.retrieve(id);
    await accounts.eu.paymentIntents.retrieve(id);
    await app.get<PaymentsService>(getPaymentsServiceToken('eu')).paymentIntents.retrieve(id);
    expect(directService.keys).toEqual([DEFAULT_KEY]);
    expect(euService.keys).toEqual([EU_KEY, EU_KEY]);
    expect(accounts.direct).not.toBe(accounts.eu);
    expect(app.get(PaymentsService)).toBe(accounts.direct);
  });

  it("[W12] a handler's ctx.retrieveIntent() asks its own instance's account", async () => {
    await post(`${base}/${EU_PATH}`, signFor(EU_SECRET, createPaymentEvent('payment_intent.succeeded')));
    await post(`${base}/${DEFAULT_PATH}`, signFor(DEFAULT_SECRET, createPaymentEvent('payment_intent.succeeded')));
    expect(euService.keys).toEqual([EU_KEY]);
    expect(directService.keys).toEqual([DEFAULT_KEY]);
  });

  it('[W10] each instance has its own registry of handlers', () => {
    const registries = app.get(Registries);
    expect(registries.direct.handlers().map((h) => h.id)).toEqual(['AccountHandlers.directPaid']);
    expect(registries.eu.handlers().map((h) => h.id)).toEqual(['AccountHandlers.euPaid']);
    expect(app.get<PaymentEventsRegistry>(getPaymentEventsRegistryToken('eu'))).toBe(registries.eu);
    expect(app.get(PaymentEventsRegistry)).toBe(registries.direct);
  });

  it('logs each route with its instance, and never either key', () => {
    const lines = logger.messages();
    expect(lines).toContain(`Receiving webhooks at POST /${DEFAULT_PATH}`);
    expect(lines).toContain(`Receiving webhooks at POST /${EU_PATH} (instance 'eu')`);
    expect(logger.text()).not.toContain(DEFAULT_KEY);
    expect(logger.text()).not.toContain(EU_KEY);
  });
});
