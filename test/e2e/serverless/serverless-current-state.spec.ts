import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import {
  OnPaymentEvent,
  PaymentsModule,
  PaymentsService,
  type PaymentEvent,
  type PaymentEventContext,
} from '../../../lib/index.js';
import { createPaymentsWebhookHandler, type PaymentsWebhookHandler } from '../../../lib/serverless/index.js';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { WebhookReceiver, type ReceivedDelivery } from '../testing/simulator/webhook-receiver.fixture.js';

/*
 * Issue 43 item 5 with issue 42: current-state handling works the same in a function as behind the route.
 * The simulator delivers to an edge that keeps each POST's bytes and headers (as an API gateway would);
 * each is handed to the function handler as a function URL event. A late requires_capture after
 * succeeded is answered superseded and its handler does not run; the one GET comes from the function's
 * own client.
 */

const KEY = 'sk_test_function_current_state';

@Injectable()
class Orders {
  readonly runs: Array<{ handler: string; state: string | undefined }> = [];

  @OnPaymentEvent('payment_intent.succeeded', { current: true })
  paid(_event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): void {
    this.runs.push({ handler: 'paid', state: ctx.intent?.state });
  }

  @OnPaymentEvent('payment_intent.requires_capture', { current: true })
  authorized(_event: PaymentEvent<'payment_intent.requires_capture'>, ctx: PaymentEventContext): void {
    this.runs.push({ handler: 'authorized', state: ctx.intent?.state });
  }
}

/** A function URL event (payload 2.0): lower-cased headers, the body in base64. */
const functionEvent = (delivery: ReceivedDelivery) => ({
  version: '2.0',
  routeKey: 'POST /payments/webhooks',
  rawPath: '/payments/webhooks',
  headers: Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name, String(value)])),
  requestContext: { http: { method: 'POST', path: '/payments/webhooks' } },
  body: Buffer.from(delivery.rawBody).toString('base64'),
  isBase64Encoded: true,
});

describe('serverless function handler: current-state handling', () => {
  let sim: PaymentsSimulator;
  let edge: WebhookReceiver;
  let handler: PaymentsWebhookHandler;

  beforeAll(async () => {
    sim = new PaymentsSimulator({ apiKeys: [KEY], retrySchedule: [20] });
    const baseUrl = await sim.start();
    edge = new WebhookReceiver();
    const endpoint = sim.registerWebhookEndpoint({ url: await edge.start(), apiKey: KEY });
    @Module({
      imports: [
        PaymentsModule.forRoot({
          apiKey: KEY,
          environment: 'sandbox',
          baseUrl,
          allowInsecureHttp: true,
          webhooks: { verifier: sim.verifierFor(endpoint.secret) },
        }),
      ],
      providers: [Orders],
    })
    class FunctionModule {}
    handler = createPaymentsWebhookHandler({ module: FunctionModule, contextOptions: { logger: false } });
  });
  afterAll(async () => {
    await handler?.close();
    await edge?.stop();
    await sim?.stop();
  });

  /** The deliveries the edge got from `from` on, of `type`, each answered by the function. */
  const forward = async (from: number, type: string) => {
    const answers = [];
    for (const delivery of edge.deliveries.slice(from).filter((d) => d.body.event === type)) {
      const result = await handler(functionEvent(delivery) as never);
      answers.push([result.statusCode, JSON.parse(String(result.body)).outcome]);
    }
    return answers;
  };

  it('[W12] succeeded, then a late requires_capture: answered 200 superseded, one GET, its handler never runs', async () => {
    const app = await handler.context();
    const intent = await app.get(PaymentsService).paymentIntents.create({ amount: 1500 });
    const confirmed = await fetch(`${sim.baseUrl}/embed/confirm`, {
      method: 'POST',
      headers: { authorization: `Embed ${String(intent['embed_token'])}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'succeeded' }),
    });
    expect(confirmed.status).toBe(200);
    await sim.waitForIdle();
    const gets = () => sim.requestCounts().byRoute['GET /payment_intents/:id'] ?? 0;
    const before = gets();
    expect(await forward(0, 'payment_intent.succeeded')).toEqual([[200, 'handled']]);
    expect(gets() - before).toBe(1);

    const from = edge.deliveries.length;
    sim.emit('payment_intent.requires_capture', intent.id, { late: true });
    await sim.waitForIdle();
    expect(await forward(from, 'payment_intent.requires_capture')).toEqual([[200, 'superseded']]);
    expect(app.get(Orders).runs).toEqual([{ handler: 'paid', state: 'succeeded' }]);
  });
});
