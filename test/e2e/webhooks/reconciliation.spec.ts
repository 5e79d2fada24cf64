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
} from '../../../lib/index.js';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { PaymentsReconciler } from '../../../lib/webhooks/reconcile/payments-reconciler.js';

/*
 * When webhooks don't come (issue 24), against the simulator: the service drops a share of deliveries
 * for good and delays others; the reconciler retrieves what it watches and runs the handlers of a
 * terminal state no webhook delivered. Every paid order is fulfilled exactly once, whichever path comes
 * first, and a cancelled one never.
 */
class DeferredVerifier implements WebhookVerifier {
  inner: WebhookVerifier | undefined;
  verify(input: Parameters<WebhookVerifier['verify']>[0]) {
    return this.inner ? this.inner.verify(input) : { valid: false as const, reason: 'not_ready' };
  }
}

@Injectable()
class Shop {
  readonly fulfilled: Array<{ intent: string; source: PaymentEventContext['source'] }> = [];
  readonly cancelled: string[] = [];

  @OnPaymentEvent('payment_intent.succeeded')
  fulfil(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): void {
    this.fulfilled.push({ intent: String(event.data.payment_intent?.['id']), source: ctx.source });
  }

  @OnPaymentEvent('payment_intent.cancelled')
  cancel(event: PaymentEvent<'payment_intent.cancelled'>): void {
    this.cancelled.push(String(event.data.payment_intent?.['id']));
  }
}

describe('reconciliation against the simulator', () => {
  const sim = new PaymentsSimulator({ apiKeys: ['sk_test_reconcile'], retrySchedule: [20] });
  const verifier = new DeferredVerifier();
  let app: INestApplication;
  let reconciler: PaymentsReconciler;
  let shop: Shop;

  const order = async (outcome: 'succeeded' | 'cancelled'): Promise<string> => {
    const intent = await app.get(PaymentsService).paymentIntents.create({ amount: 1500 });
    const res = await fetch(`${sim.baseUrl}/embed/confirm`, {
      method: 'POST',
      headers: { authorization: `Embed ${String(intent['embed_token'])}`, 'content-type': 'application/json' },
      body: JSON.stringify({ outcome }),
    });
    expect(res.status).toBe(200);
    return intent.id;
  };

  beforeAll(async () => {
    const baseUrl = await sim.start();
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiKey: 'sk_test_reconcile',
          environment: 'sandbox',
          baseUrl,
          allowInsecureHttp: true,
          webhooks: {
            verifier,
            // Due at once, checked again at once: the test sweeps by hand (no waiting on a timer).
            reconcile: {
              afterSeconds: 0,
              cadence: [{ untilAgeSeconds: 3600, everySeconds: 1 }],
              maxRetrievesPerSecond: 100,
            },
          },
        }),
      ],
      providers: [Shop],
    }).compile();
    app = moduleRef.createNestApplication({ rawBody: true, logger: false });
    await app.listen(0, '127.0.0.1');
    const endpoint = await app
      .get(PaymentsService)
      .webhookEndpoints.create({ url: `${await app.getUrl()}/payments/webhooks` });
    verifier.inner = sim.verifierFor(endpoint.secret);
    reconciler = app.get(PaymentsReconciler);
    shop = app.get(Shop);
  });
  afterAll(async () => {
    await app?.close();
    await sim.stop();
  });

  it('a paid order whose webhook was dropped for good is fulfilled once by the reconciler', async () => {
    sim.controls.reset().dropDeliveries(1);
    const id = await order('succeeded');
    await sim.waitForIdle();
    expect(shop.fulfilled.filter((f) => f.intent === id)).toEqual([]);
    const swept = await reconciler.sweep();
    expect(swept).toMatchObject({ swept: true, reconciled: 1 });
    expect(shop.fulfilled.filter((f) => f.intent === id)).toEqual([{ intent: id, source: 'reconciliation' }]);
    expect(sim.controls.dropped).toBeGreaterThanOrEqual(1);
    expect(sim.requestCounts().byRoute['GET /payment_intents/:id']).toBeGreaterThan(0);
  });

  it('a webhook delivered late, after the reconciler acted, is answered duplicate: fulfilled once', async () => {
    sim.controls.reset().hold();
    const id = await order('succeeded');
    await reconciler.sweep();
    sim.controls.release();
    await sim.waitForIdle();
    expect(shop.fulfilled.filter((f) => f.intent === id)).toEqual([{ intent: id, source: 'reconciliation' }]);
    const requests = sim.webhookRequests().filter((r) => r.status === 'succeeded' || r.last_status_code !== null);
    expect(requests.at(-1)?.last_status_code).toBe(200);
  });

  it('a webhook that came in time settles the order: the reconciler runs nothing and retrieves nothing more', async () => {
    sim.controls.reset();
    const id = await order('succeeded');
    await sim.waitForIdle();
    expect(shop.fulfilled.filter((f) => f.intent === id)).toEqual([{ intent: id, source: 'webhook' }]);
    const retrievesBefore = sim.requestCounts().byRoute['GET /payment_intents/:id'] ?? 0;
    await reconciler.sweep();
    expect(shop.fulfilled.filter((f) => f.intent === id)).toHaveLength(1);
    expect(sim.requestCounts().byRoute['GET /payment_intents/:id'] ?? 0).toBe(retrievesBefore);
  });

  it('a cancelled order whose webhook was dropped runs the cancelled handlers only: never fulfilled', async () => {
    sim.controls.reset().dropDeliveries(1);
    const id = await order('cancelled');
    await sim.waitForIdle();
    await reconciler.sweep();
    expect(shop.cancelled).toContain(id);
    expect(shop.fulfilled.filter((f) => f.intent === id)).toEqual([]);
  });
});
