import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  OnPaymentEvent,
  PaymentsModule,
  PaymentsService,
  type PaymentEvent,
  type PaymentEventContext,
  type WebhookVerifier,
} from '../../../../lib/index.js';
import { PaymentsSimulator } from '../../../../lib/testing/index.js';

// The real client and receiver against the simulator, from create to a handled webhook, with the
// endpoint registered through PaymentsService (docs/testing.md's own examples run from the page:
// test/unit/docs/testing-doc.spec.ts).

/** Resolves the verifier lazily: the endpoint secret exists only once the endpoint is registered. */
class DeferredVerifier implements WebhookVerifier {
  inner: WebhookVerifier | undefined;
  verify(input: Parameters<WebhookVerifier['verify']>[0]) {
    return this.inner ? this.inner.verify(input) : { valid: false as const, reason: 'not_ready' };
  }
}

@Injectable()
class Fulfilment {
  readonly paid: Array<{ eventId: string; state: string }> = [];
  @OnPaymentEvent('payment_intent.succeeded')
  async onPaid(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext) {
    const intent = await ctx.retrieveIntent();
    this.paid.push({ eventId: event.id, state: intent.state });
  }
}

describe('README example: PaymentsSimulator with PaymentsModule', () => {
  const sim = new PaymentsSimulator({ apiKeys: ['sk_test_sim'], retrySchedule: [20, 50, 100] });
  const verifier = new DeferredVerifier();
  let app: INestApplication;

  beforeAll(async () => {
    const baseUrl = await sim.start();
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiKey: 'sk_test_sim',
          environment: 'sandbox',
          baseUrl,
          allowInsecureHttp: true,
          webhooks: { verifier },
        }),
      ],
      providers: [Fulfilment],
    }).compile();
    app = moduleRef.createNestApplication({ rawBody: true });
    await app.listen(0, '127.0.0.1');
    const endpoint = await app
      .get(PaymentsService)
      .webhookEndpoints.create({ url: `${await app.getUrl()}/payments/webhooks` });
    verifier.inner = sim.verifierFor(endpoint.secret);
  });
  afterAll(async () => {
    await app?.close();
    await sim.stop();
  });

  it('[E1][C2][W4] create, confirm in place of the iframe, and the handler runs once for the webhook', async () => {
    sim.controls.duplicateDeliveries(2, 'sequential');
    const intent = await app.get(PaymentsService).paymentIntents.create({ amount: 1500, capture_method: 'manual' });
    const res = await fetch(`${sim.baseUrl}/embed/confirm`, {
      method: 'POST',
      headers: { authorization: `Embed ${String(intent['embed_token'])}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'succeeded' }),
    });
    expect(res.status).toBe(200);
    await sim.waitForIdle();
    const [event] = sim.events();
    expect(app.get(Fulfilment).paid).toEqual([{ eventId: event!.id, state: 'succeeded' }]);
    expect(sim.webhookRequests().map((r) => r.last_status_code)).toEqual([200, 200]);
  });
});
