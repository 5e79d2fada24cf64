import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, type PaymentEvent, type PaymentEventContext } from '../../../lib/index.js';
import type { PaymentsSimulator } from '../../../lib/testing/index.js';
import type { PaymentsReconciler } from '../../../lib/webhooks/index.js';
import { startReconcileShop, type ReconcileShop } from '../../fixtures/reconcile/reconcile-shop.fixture.js';

/*
 * When webhooks don't come (issue 24), against the simulator: the service drops a share of deliveries
 * for good and delays others; the reconciler retrieves what it watches and runs the handlers of a
 * terminal state no webhook delivered. Every paid order is fulfilled exactly once, whichever path comes
 * first, and a cancelled one never.
 */
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
  let reconcileShop: ReconcileShop;
  let sim: PaymentsSimulator;
  let reconciler: PaymentsReconciler;
  let shop: Shop;
  const order = (outcome: 'succeeded' | 'cancelled'): Promise<string> => reconcileShop.order(outcome);

  beforeAll(async () => {
    reconcileShop = await startReconcileShop([Shop]);
    ({ sim, reconciler } = reconcileShop);
    shop = reconcileShop.app.get(Shop);
  });
  afterAll(async () => {
    await reconcileShop?.close();
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
