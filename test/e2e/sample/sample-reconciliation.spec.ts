import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AdminOverview } from '../../../sample/admin/admin-overview.service.js';
import { PaymentsReconciler } from '../../../lib/webhooks/index.js';
import { confirmInForm, createOrder, getOrder } from './sample-http.helpers.js';
import { requestJson, startSampleStack, type SampleStack } from './sample-stack.fixture.js';

const TOKEN = 'admin-token-for-tests-0123456789';

/*
 * The sample shop when a webhook never comes (issue 24): the order is settled by the reconciler, once,
 * and the operator view says which orders were settled that way.
 */
describe('sample shop: an order whose webhook never came', () => {
  let stack: SampleStack;
  beforeAll(async () => {
    stack = await startSampleStack({ env: { SHOP_ADMIN_TOKEN: TOKEN, SAMPLE_RECONCILE_AFTER_SECONDS: '0' } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is paid by the reconciler, fulfilled once, and shown as reconciled in /admin', async () => {
    stack.simulator.controls.reset().dropDeliveries(1);
    const { order, checkout } = await createOrder(stack);
    await confirmInForm(checkout, 'succeeded');
    await stack.simulator.waitForIdle();
    expect((await getOrder(stack, order.id)).status).toBe('pending'); // no webhook came

    expect(await stack.app.get(PaymentsReconciler).sweep()).toMatchObject({ swept: true, reconciled: 1 });
    const paid = await getOrder(stack, order.id);
    expect(paid.status).toBe('paid');

    const overview = await requestJson<AdminOverview>('GET', `${stack.url}/admin/api/overview`, undefined, {
      authorization: `Bearer ${TOKEN}`,
    });
    expect(overview.body.orders.find((o) => o.id === order.id)).toMatchObject({ status: 'paid', reconciled: true });
    // A second sweep finds nothing to do: the intent is no longer watched.
    expect(await stack.app.get(PaymentsReconciler).sweep()).toMatchObject({ checked: 0 });
    stack.simulator.controls.reset();
  });
});
