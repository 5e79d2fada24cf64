import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger, Module } from '@nestjs/common';
import { OnPaymentEvent, PaymentsModule, type PaymentEvent } from '../../../lib/index.js';
import { createPaymentsWebhookHandler, type PaymentsWebhookHandler } from '../../../lib/serverless/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions, sign } from '../../fixtures/webhooks/webhook-app.fixture.js';

/** How many times the app's providers were built: once per function instance. */
const built = { count: 0 };
const runs: string[] = [];
const failing = new Set<string>();

@Injectable()
class Fulfilment {
  constructor() {
    built.count += 1;
  }

  @OnPaymentEvent('payment_intent.succeeded')
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    if (failing.has(event.id)) throw new Error('fulfilment is down');
    runs.push(event.id);
  }
}

@Module({ imports: [PaymentsModule.forRoot(fixtureOptions())], providers: [Fulfilment] })
class FunctionModule {}

@Module({
  imports: [
    PaymentsModule.forRoot({
      ...fixtureOptions(),
      name: 'eu',
      webhooks: { ...fixtureOptions().webhooks, path: 'eu/webhooks' } as never,
    }),
  ],
  providers: [Fulfilment],
})
class NamedFunctionModule {}

const logger = new CapturingLogger();
const handlers: PaymentsWebhookHandler[] = [];
const handlerFor = (module: unknown, instance?: string): PaymentsWebhookHandler => {
  const handler = createPaymentsWebhookHandler({ module: module as never, instance, contextOptions: { logger } });
  handlers.push(handler);
  return handler;
};

/** An HTTP API (payload 2.0) or function URL event: lower-cased headers, the body in base64. */
function v2Event(rawBody: string, headers: Record<string, string>) {
  return {
    version: '2.0',
    routeKey: 'POST /payments/webhooks',
    rawPath: '/payments/webhooks',
    headers: { 'content-type': 'application/json', ...headers },
    requestContext: { http: { method: 'POST', path: '/payments/webhooks' } },
    body: Buffer.from(rawBody).toString('base64'),
    isBase64Encoded: true,
  };
}

/** A REST API (payload 1.0) event: headers as the sender cased them, the body as text. */
function v1Event(rawBody: string, headers: Record<string, string>) {
  const cased = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name.replace(/(^|-)\w/g, (c) => c.toUpperCase()), value]),
  );
  return {
    resource: '/payments/webhooks',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/json', ...cased },
    multiValueHeaders: Object.fromEntries(Object.entries(cased).map(([name, value]) => [name, [value]])),
    body: rawBody,
    isBase64Encoded: false,
  };
}

beforeAll(() => Logger.overrideLogger(logger));
afterEach(async () => {
  while (handlers.length > 0) await handlers.pop()!.close();
});
afterAll(() => Logger.overrideLogger(new CapturingLogger()));

describe('Nest in a function: createPaymentsWebhookHandler', () => {
  it('[W4] answers a base64 HTTP API event 200 handled, its redelivery 200 duplicate, and runs the handler once', async () => {
    const handler = handlerFor(FunctionModule);
    const event = createPaymentEvent('payment_intent.succeeded');
    const signed = sign(event);

    const first = await handler(v2Event(signed.rawBody, signed.headers));
    const again = await handler(v2Event(signed.rawBody, signed.headers));

    expect(first).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ received: true, outcome: 'handled' }),
    });
    expect(JSON.parse(again.body)).toEqual({ received: true, outcome: 'duplicate' });
    expect(runs.filter((id) => id === event.id)).toEqual([event.id]);
  });

  it('creates the application context once per function instance and reuses it for every event', async () => {
    const handler = handlerFor(FunctionModule);
    const before = built.count;

    for (let i = 0; i < 3; i += 1) {
      const signed = sign(createPaymentEvent('payment_intent.succeeded'));
      expect((await handler(v1Event(signed.rawBody, signed.headers))).statusCode).toBe(200);
    }

    expect(built.count - before).toBe(1);
    expect(await handler.context()).toBe(await handler.context());
  });

  it('[W1] reads a REST API event (mixed-case headers, a text body) and refuses a forged one 401 without running anything', async () => {
    const handler = handlerFor(FunctionModule);
    const event = createPaymentEvent('payment_intent.succeeded');
    const signed = sign(event);
    const forged = { ...signed.headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };

    const refused = await handler(v1Event(signed.rawBody, forged));
    const unsigned = await handler(v2Event(signed.rawBody, {}));
    const accepted = await handler(v1Event(signed.rawBody, signed.headers));

    expect(refused).toMatchObject({
      statusCode: 401,
      body: JSON.stringify({ received: false, error: 'invalid_signature' }),
    });
    expect(unsigned.statusCode).toBe(401);
    expect(accepted.statusCode).toBe(200);
    expect(runs.filter((id) => id === event.id)).toEqual([event.id]);
  });

  it('answers 500 failed when a handler throws (the service retries), and handled on the next delivery', async () => {
    const handler = handlerFor(FunctionModule);
    const event = createPaymentEvent('payment_intent.succeeded');
    const signed = sign(event);
    failing.add(event.id);

    const failed = await handler(v2Event(signed.rawBody, signed.headers));
    failing.delete(event.id);
    const retried = await handler(v2Event(signed.rawBody, signed.headers));

    expect(failed).toMatchObject({ statusCode: 500, body: JSON.stringify({ received: true, outcome: 'failed' }) });
    expect(JSON.parse(retried.body)).toEqual({ received: true, outcome: 'handled' });
  });

  it('answers with the receiver of a named instance', async () => {
    const handler = handlerFor(NamedFunctionModule, 'eu');
    const signed = sign(createPaymentEvent('payment_intent.succeeded'));

    expect((await handler(v2Event(signed.rawBody, signed.headers))).statusCode).toBe(200);
  });

  it('answers 503 while the context cannot start (the service retries), and starts it on a later event', async () => {
    let attempts = 0;
    @Module({
      imports: [PaymentsModule.forRoot(fixtureOptions())],
      providers: [
        {
          provide: 'FLAKY',
          useFactory: () => {
            attempts += 1;
            if (attempts === 1) throw new Error('database not reachable yet');
            return true;
          },
        },
      ],
    })
    class FlakyModule {}
    const handler = handlerFor(FlakyModule);
    const signed = sign(createPaymentEvent('payment_intent.succeeded'));

    const first = await handler(v2Event(signed.rawBody, signed.headers));
    const second = await handler(v2Event(signed.rawBody, signed.headers));

    expect(first).toMatchObject({
      statusCode: 503,
      body: JSON.stringify({ received: false, error: 'internal_error' }),
    });
    expect(second.statusCode).toBe(200);
  });
});
