import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, type PaymentEvent, type PaymentEventContext } from '../../../lib/index.js';
import { startReconcileShop, type ReconcileShop } from '../../fixtures/reconcile/reconcile-shop.fixture.js';
import { until } from '../../fixtures/webhooks/deferred.js';

/*
 * Issue 40, defect 1, as a merchant meets it: one reconciled handler that never returns must not stop
 * reconciliation for the rest of its instance, and `app.close()` must not hang on it. Reconciliation on
 * its own timer (everySeconds 1, batchSize 2), webhooks dropped for good, the handler of the first
 * intent hung forever.
 */
@Injectable()
class Shop {
  hung: string | undefined;
  readonly fulfilled: Array<{ intent: string; source: PaymentEventContext['source'] }> = [];

  @OnPaymentEvent('payment_intent.succeeded')
  fulfil(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> | void {
    const intent = String(event.data.payment_intent?.['id']);
    this.hung ??= intent; // the first intent's handler
    if (intent === this.hung) return new Promise<void>(() => undefined); // never resolves
    this.fulfilled.push({ intent, source: ctx.source });
  }
}

describe('a reconciled handler that never returns', () => {
  let shop: ReconcileShop;
  let handlers: Shop;
  beforeAll(async () => {
    shop = await startReconcileShop([Shop], {
      reconcile: {
        afterSeconds: 0,
        everySeconds: 1,
        batchSize: 2,
        cadence: [{ untilAgeSeconds: 3600, everySeconds: 1 }],
        maxRetrievesPerSecond: 50,
      },
    });
    handlers = shop.app.get(Shop);
  });
  afterAll(async () => {
    await shop?.sim.stop().catch(() => undefined);
  });

  it('stops neither reconciliation of the other intents (on every sweep) nor the shutdown', async () => {
    const { sim } = shop;
    sim.controls.reset().dropDeliveries(1);
    // Intent A: paid, its webhook lost; its reconciled handler hangs forever.
    const a = await shop.order('succeeded');
    await until(() => handlers.hung === a, "A's handler to start (and hang)", 20_000);
    // Intent B, created after: paid, its webhook lost too. The timer's sweeps must still reach it.
    const b = await shop.order('succeeded');
    await until(() => handlers.fulfilled.some((f) => f.intent === b), 'B to be reconciled', 25_000);
    expect(handlers.fulfilled).toEqual([{ intent: b, source: 'reconciliation' }]);
    // The shutdown has a bound, whatever the hung handler does.
    const closed = await Promise.race([
      shop.app.close().then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 15_000).unref()),
    ]);
    expect(closed).toBe('closed');
  }, 60_000);
});
