import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';
import { FulfilmentService } from '../../../sample/orders/fulfilment.service.js';
import { OrdersRepository } from '../../../sample/orders/orders.repository.js';
import { CountingFulfilment } from './fulfilment.doubles.js';
import { createOrder, getOrder } from './sample-http.helpers.js';
import { startSampleStack, type SampleStack } from './sample-stack.fixture.js';

const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * An endpoint made "in the dashboard": the secrets come from PAYMENTS_WEBHOOK_SECRET (current, then
 * the one being rotated out), nothing is registered at boot, and the test delivers events itself,
 * signed as the service would.
 */
describe('sample merchant app: only verified webhooks move orders', () => {
  const current = newSecret();
  const previous = newSecret();
  const fulfilment = new CountingFulfilment();
  let stack: SampleStack;

  beforeAll(async () => {
    stack = await startSampleStack({
      env: { PAYMENTS_WEBHOOK_SECRET: `${current},${previous}` },
      configure: (builder) => builder.overrideProvider(FulfilmentService).useValue(fulfilment),
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const intentOf = (orderId: string): string => stack.app.get(OrdersRepository).findById(orderId)!.paymentIntentId;
  const retrieves = (): number => stack.simulator.requestCounts().byRoute['GET /payment_intents/:id'] ?? 0;
  // Fulfilment runs on the intent's current state ({ current: true }): the service moves it first.
  const succeed = (orderId: string): void => void stack.simulator.emit('payment_intent.succeeded', intentOf(orderId));
  const deliver = async (payload: object, secret: string): Promise<number> => {
    const { rawBody, headers } = signWebhook(payload, { scheme: 'standard-webhooks', secret });
    const res = await fetch(`${stack.url}/payments/webhooks`, { method: 'POST', headers, body: rawBody });
    await res.arrayBuffer();
    return res.status;
  };

  it('registers no endpoint when PAYMENTS_WEBHOOK_SECRET is given', () => {
    expect(stack.endpoint).toBeUndefined();
  });

  it('[W5] a delivery signed with another secret is refused (401) and the order stays pending', async () => {
    const { order } = await createOrder(stack, { amount: 1200 });
    const event = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: intentOf(order.id), amount: 1200 } },
    });
    expect(await deliver(event, newSecret())).toBe(401);
    expect((await getOrder(stack, order.id)).status).toBe('pending');
  });

  it('[W7] accepts a delivery signed with the secret being rotated out', async () => {
    const { order } = await createOrder(stack, { amount: 1300 });
    succeed(order.id);
    const event = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: intentOf(order.id), amount: 1300 } },
    });
    expect(await deliver(event, previous)).toBe(200);
    expect((await getOrder(stack, order.id)).status).toBe('paid');
  });

  it('[W12] retrieves the intent when the event data lacks the amount, then pays the order', async () => {
    const { order } = await createOrder(stack, { amount: 1400 });
    succeed(order.id);
    const before = retrieves();
    const event = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: intentOf(order.id), amount: undefined } },
    });
    expect(event.data.payment_intent).not.toHaveProperty('amount', expect.anything());
    expect(await deliver(event, current)).toBe(200);
    expect(retrieves()).toBe(before + 1);
    expect((await getOrder(stack, order.id)).status).toBe('paid');
  });

  it('[W12] uses the amount in the event data when it has it: the one retrieve is the current-state check', async () => {
    const { order } = await createOrder(stack, { amount: 1500 });
    succeed(order.id);
    const before = retrieves();
    const event = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: intentOf(order.id), amount: 1500 } },
    });
    expect(await deliver(event, current)).toBe(200);
    expect(retrieves()).toBe(before + 1);
    expect((await getOrder(stack, order.id)).status).toBe('paid');
  });

  it('leaves the order pending, with a note, when the paid amount differs from the order', async () => {
    const { order } = await createOrder(stack, { amount: 1600 });
    succeed(order.id);
    const event = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: intentOf(order.id), amount: 16 } },
    });
    expect(await deliver(event, current)).toBe(200);
    const after = await getOrder(stack, order.id);
    expect(after.status).toBe('pending');
    expect(after.notes.some((n) => n.includes('instead of 1600'))).toBe(true);
  });

  it('acknowledges (200) an event about an intent that is not one of its orders, and changes nothing', async () => {
    const callsBefore = fulfilment.calls;
    const event = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: randomUUID(), amount: 100 } },
    });
    expect(await deliver(event, current)).toBe(200);
    expect(fulfilment.calls).toBe(callsBefore);
  });
});
