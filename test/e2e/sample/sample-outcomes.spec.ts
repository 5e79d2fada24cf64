import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { OrdersRepository } from '../../../sample/orders/orders.repository.js';
import { confirmInForm, createOrder, getOrder } from './sample-http.helpers.js';
import { requestJson, startSampleStack, waitFor, type SampleStack } from './sample-stack.fixture.js';

describe('sample merchant app: what each payment outcome does to the order', () => {
  let stack: SampleStack;

  beforeAll(async () => {
    stack = await startSampleStack();
  });
  afterEach(() => {
    stack.simulator.controls.reset();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const paymentIntentIdOf = (orderId: string): string =>
    stack.app.get(OrdersRepository).findById(orderId)!.paymentIntentId;

  const settled = (orderId: string) =>
    waitFor(async () => {
      const order = await getOrder(stack, orderId);
      return order.status === 'pending' ? undefined : order;
    }, `order ${orderId} to leave pending`);

  it.each(['errored_authorization', 'errored_capture', 'errored_sale'])(
    '[L2] payment_intent.%s moves the order to failed',
    async (outcome) => {
      const { order, checkout } = await createOrder(stack);
      await confirmInForm(checkout, outcome);
      const after = await settled(order.id);
      expect(after.status).toBe('failed');
    },
  );

  it('[L2] payment_intent.cancelled (the shopper cancelled) moves the order to cancelled, not failed', async () => {
    const { order, checkout } = await createOrder(stack);
    await confirmInForm(checkout, 'cancelled');
    const after = await settled(order.id);
    expect(after.status).toBe('cancelled');
    expect(stack.app.get(OrdersRepository).findById(order.id)!.history.at(-1)!.cause).toMatch(
      /^payment_intent\.cancelled/,
    );
  });

  it.each(['requires_payment_method', 'requires_confirmation', 'requires_capture', 'requires_review'])(
    'payment_intent.%s leaves the order pending with the action it needs and a note',
    async (outcome) => {
      const { order, checkout } = await createOrder(stack);
      await confirmInForm(checkout, outcome);
      const noted = await waitFor(async () => {
        const current = await getOrder(stack, order.id);
        return current.notes.some((n) => n.startsWith(`payment_intent.${outcome}`)) ? current : undefined;
      }, 'the note');
      await stack.simulator.waitForIdle();
      const after = await getOrder(stack, order.id);
      expect(after.status).toBe('pending');
      expect(after.action).toBe(outcome);
      expect(noted.notes.find((n) => n.startsWith(`payment_intent.${outcome}`))).toContain('more action is needed');
    },
  );

  it('a late errored event never undoes a payment', async () => {
    const { order, checkout } = await createOrder(stack);
    await confirmInForm(checkout, 'succeeded');
    expect((await settled(order.id)).status).toBe('paid');
    stack.simulator.emit('payment_intent.errored_capture', paymentIntentIdOf(order.id));
    await stack.simulator.waitForIdle();
    const after = await getOrder(stack, order.id);
    expect(after.status).toBe('paid');
    expect(after.notes.some((n) => n.startsWith('payment_intent.errored_capture ignored'))).toBe(true);
  });

  it('ends paid when a success follows a processor error but is delivered before it', async () => {
    const { order, checkout } = await createOrder(stack);
    stack.simulator.controls.hold();
    await confirmInForm(checkout, 'errored_authorization');
    stack.simulator.emit('payment_intent.succeeded', paymentIntentIdOf(order.id));
    // Deliver the later success first, then the earlier error.
    stack.simulator.controls.release('reverse');
    await stack.simulator.waitForIdle();
    expect((await getOrder(stack, order.id)).status).toBe('paid');
  });

  it('cancels a pending order on the merchant side (POST /orders/:id/cancel)', async () => {
    const { order } = await createOrder(stack);
    const answer = await requestJson<{ status: string }>('POST', `${stack.url}/orders/${order.id}/cancel`);
    expect(answer.status).toBe(200);
    expect((await getOrder(stack, order.id)).status).toBe('cancelled');
  });
});
