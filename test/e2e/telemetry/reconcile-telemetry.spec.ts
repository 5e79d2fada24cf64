import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, PaymentsService } from '../../../lib/index.js';
import {
  PaymentsAttributes,
  PaymentsMetricNames,
  PaymentsSpanNames,
} from '../../../lib/telemetry/payments-telemetry.names.js';
import { OtelTestSdk } from '../../fixtures/telemetry/otel-sdk.fixture.js';
import { startReconcileShop, type ReconcileShop } from '../../fixtures/reconcile/reconcile-shop.fixture.js';

/* A sweep is visible (issue 24): a span per sweep with its counts, a counter of intents by result. */
@Injectable()
class Shop {
  @OnPaymentEvent('payment_intent.succeeded')
  fulfil(): void {}
}

const sdk = new OtelTestSdk(); // before the app boots: the module creates its instruments at boot

describe('reconciliation telemetry', () => {
  let shop: ReconcileShop;
  beforeAll(async () => {
    await sdk.resetMetrics();
    shop = await startReconcileShop([Shop]);
  });
  afterAll(async () => {
    await shop?.close();
    await sdk.shutdown();
  });

  it('a sweep that reconciles one intent and finds another pending: span payments.reconcile.sweep and payments.reconcile.intents by result', async () => {
    shop.sim.controls.reset().dropDeliveries(1);
    await shop.order('succeeded');
    // Created, never confirmed: still requires_payment_method, so pending.
    await shop.app.get(PaymentsService).paymentIntents.create({ amount: 100 });
    await shop.sim.waitForIdle();
    expect(await shop.reconciler.sweep()).toMatchObject({ reconciled: 1, pending: 1 });

    const sweep = sdk.spans().find((span) => span.name === PaymentsSpanNames.reconcileSweep);
    expect(sweep?.attributes).toMatchObject({
      [PaymentsAttributes.reconcileChecked]: 2,
      [PaymentsAttributes.reconcileReconciled]: 1,
      [PaymentsAttributes.reconcilePending]: 1,
    });
    const points = await sdk.points(PaymentsMetricNames.reconcileIntents);
    expect(points).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ attributes: { [PaymentsAttributes.reconcileResult]: 'reconciled' }, value: 1 }),
        expect.objectContaining({ attributes: { [PaymentsAttributes.reconcileResult]: 'pending' }, value: 1 }),
      ]),
    );
  });
});
