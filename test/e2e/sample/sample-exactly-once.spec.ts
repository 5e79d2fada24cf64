import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { FulfilmentService } from '../../../sample/orders/fulfilment.service.js';
import { OrdersRepository } from '../../../sample/orders/orders.repository.js';
import { CountingFulfilment, FlakyFulfilment } from './fulfilment.doubles.js';
import { confirmInForm, createOrder, getOrder } from './sample-http.helpers.js';
import { requestJson, startSampleStack, waitFor, type SampleStack } from './sample-stack.fixture.js';

/** Each test boots its own stack: the fulfilment double is per test. */
describe('sample merchant app: an order is settled exactly once', () => {
  let stack: SampleStack | undefined;

  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  const paidTransitions = (s: SampleStack, orderId: string): number =>
    s.app
      .get(OrdersRepository)
      .findById(orderId)!
      .history.filter((change) => change.to === 'paid').length;

  it('[W4] pays an order exactly once when the service duplicates and reorders its deliveries', async () => {
    const fulfilment = new CountingFulfilment();
    stack = await startSampleStack({
      configure: (builder) => builder.overrideProvider(FulfilmentService).useValue(fulfilment),
    });
    // Three copies of every delivery at once, and the batch (succeeded + charge.succeeded) last-first.
    stack.simulator.controls.duplicateDeliveries(3, 'concurrent').outOfOrder('reverse');
    const { order, checkout } = await createOrder(stack);

    await confirmInForm(checkout, 'succeeded');
    await stack.simulator.waitForIdle();

    const deliveries = stack.simulator.webhookRequests().filter((r) => r.event === 'payment_intent.succeeded');
    expect(deliveries).toHaveLength(3);
    expect(new Set(deliveries.map((r) => r.event_id)).size).toBe(1);
    expect(deliveries.every((r) => r.status === 'succeeded')).toBe(true);
    expect((await getOrder(stack, order.id)).status).toBe('paid');
    expect(fulfilment.calls).toBe(1);
    expect(fulfilment.shipments()).toHaveLength(1);
    expect(paidTransitions(stack, order.id)).toBe(1);
  });

  it('[W4] a handler that fails on the first delivery is completed by the retry, and ships once', async () => {
    const fulfilment = new FlakyFulfilment(1);
    stack = await startSampleStack({
      configure: (builder) => builder.overrideProvider(FulfilmentService).useValue(fulfilment),
    });
    const { order, checkout } = await createOrder(stack);

    await confirmInForm(checkout, 'succeeded');
    await stack.simulator.waitForIdle();

    const [delivery] = stack.simulator.webhookRequests().filter((r) => r.event === 'payment_intent.succeeded');
    expect(delivery).toBeDefined();
    expect(delivery!.attempts.map((a) => a.status_code)).toEqual([500, 200]);
    expect(delivery!.status).toBe('succeeded');
    expect((await getOrder(stack, order.id)).status).toBe('paid');
    expect(fulfilment.calls).toBe(2);
    expect(fulfilment.shipments().map((s) => s.orderId)).toEqual([order.id]);
    expect(paidTransitions(stack, order.id)).toBe(1);
  });

  it('never revives a cancelled order: a late payment_intent.succeeded leaves it cancelled and asks for a refund', async () => {
    const fulfilment = new CountingFulfilment();
    stack = await startSampleStack({
      configure: (builder) => builder.overrideProvider(FulfilmentService).useValue(fulfilment),
    });
    const { order, checkout } = await createOrder(stack);
    stack.simulator.controls.hold();
    await confirmInForm(checkout, 'succeeded');

    const cancelled = await requestJson<{ status: string }>('POST', `${stack.url}/orders/${order.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');

    stack.simulator.controls.release();
    await stack.simulator.waitForIdle();
    const after = await getOrder(stack, order.id);
    expect(after.status).toBe('cancelled');
    expect(after.notes.some((note) => note.includes('refund'))).toBe(true);
    expect(fulfilment.calls).toBe(0);
    expect(fulfilment.shipments()).toHaveLength(0);
  });

  it('a replayed payment_intent.succeeded (resent by the service) changes nothing', async () => {
    const fulfilment = new CountingFulfilment();
    stack = await startSampleStack({
      configure: (builder) => builder.overrideProvider(FulfilmentService).useValue(fulfilment),
    });
    const { order, checkout } = await createOrder(stack);
    await confirmInForm(checkout, 'succeeded');
    await stack.simulator.waitForIdle();
    const [delivery] = stack.simulator.webhookRequests().filter((r) => r.event === 'payment_intent.succeeded');
    const before = await getOrder(stack, order.id);

    // The service's resend operation (a simulator path; the reference does not show it).
    const resend = await requestJson(
      'POST',
      `${stack.env['PAYMENTS_BASE_URL']}/webhook_requests/${delivery!.id}/resend`,
      undefined,
      {
        'x-api-key': stack.env['PAYMENTS_API_KEY']!,
        'x-api-version': '1',
      },
    );
    expect(resend.status).toBe(202);
    await stack.simulator.waitForIdle();

    const replayed = stack.simulator.webhookRequests().find((r) => r.id === delivery!.id)!;
    expect(replayed.attempts.map((a) => a.status_code)).toEqual([200, 200]);
    expect(await getOrder(stack, order.id)).toEqual(before);
    expect(fulfilment.calls).toBe(1);
  });

  it('cannot cancel a paid order (409): the payment stands', async () => {
    stack = await startSampleStack();
    const { order, checkout } = await createOrder(stack);
    await confirmInForm(checkout, 'succeeded');
    await waitFor(
      async () => ((await getOrder(stack!, order.id)).status === 'paid' ? true : undefined),
      'the order to be paid',
    );
    expect((await requestJson('POST', `${stack.url}/orders/${order.id}/cancel`)).status).toBe(409);
    expect((await getOrder(stack, order.id)).status).toBe('paid');
  });
});
