import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { PaymentEventsRegistry } from '../../../lib/webhooks/index.js';
import { FulfilmentService } from '../../../sample/orders/fulfilment.service.js';
import { OrdersRepository } from '../../../sample/orders/orders.repository.js';
import { CountingFulfilment } from './fulfilment.doubles.js';
import { confirmInForm, createOrder, getOrder } from './sample-http.helpers.js';
import { requestJson, startSampleStack, waitFor, type SampleStack } from './sample-stack.fixture.js';

describe('sample merchant app: checkout flow over HTTP', () => {
  let stack: SampleStack;
  const fulfilment = new CountingFulfilment();

  beforeAll(async () => {
    stack = await startSampleStack({
      configure: (builder) => builder.overrideProvider(FulfilmentService).useValue(fulfilment),
    });
  });
  afterEach(() => {
    stack.simulator.controls.reset();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const apiKey = (): string => stack.env['PAYMENTS_API_KEY']!;

  it('[C1] POST /orders hands the browser a form URL that carries the render token as query parameter token', async () => {
    const { checkout } = await createOrder(stack);
    const formUrl = new URL(checkout.formUrl);
    expect(formUrl.origin).toBe(new URL(stack.env['PAYMENTS_BASE_URL']!).origin);
    expect(formUrl.searchParams.get('token')).toEqual(expect.any(String));
    // The simulator renders the form for exactly that token.
    const form = await fetch(checkout.formUrl);
    expect(form.status).toBe(200);
    const withoutToken = new URL(checkout.formUrl);
    withoutToken.searchParams.delete('token');
    expect((await fetch(withoutToken)).status).toBe(401);
  });

  it('[A4] the answer of POST /orders holds the order and checkout tokens only, never the API key', async () => {
    const answer = await requestJson<Record<string, Record<string, unknown>>>('POST', `${stack.url}/orders`, {
      amount: 1500,
    });
    expect(answer.status).toBe(201);
    expect(answer.text).not.toContain(apiKey());
    expect(Object.keys(answer.body).sort()).toEqual(['checkout', 'order']);
    expect(Object.keys(answer.body['checkout']!).sort()).toEqual([
      'embedToken',
      'embedTokenExpiresAt',
      'formOrigin',
      'formUrl',
      'frameAncestors',
    ]);
    const order = await requestJson('GET', `${stack.url}/orders/${String(answer.body['order']!['id'])}`);
    expect(order.text).not.toContain(apiKey());
  });

  it('[A4] the checkout page never contains the API key, and frames only the payment form', async () => {
    const res = await fetch(`${stack.url}/`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(html).toContain('Sample shop');
    expect(html).not.toContain(apiKey());
    expect(html.toLowerCase()).not.toContain('x-api-key');
    expect(res.headers.get('content-security-policy')).toContain(
      `frame-src ${new URL(stack.env['PAYMENTS_BASE_URL']!).origin}`,
    );
  });

  it('pays an order: confirm in the form, verified webhook delivered, order paid and shipped once', async () => {
    const { order, checkout } = await createOrder(stack, { amount: 2500 });
    expect(order.status).toBe('pending');
    const callsBefore = fulfilment.calls;

    const confirm = await confirmInForm(checkout, 'succeeded');
    expect(confirm.status).toBe(200);

    const paid = await waitFor(async () => {
      const current = await getOrder(stack, order.id);
      return current.status === 'paid' ? current : undefined;
    }, 'the order to be paid');
    expect(paid.amount).toBe(2500);
    await stack.simulator.waitForIdle();

    // Delivered to the registered endpoint, signed, and accepted by the verifier on the first try.
    const intentId = stack.simulator
      .events()
      .find(
        (e) =>
          e.event === 'payment_intent.succeeded' &&
          (e.data as { payment_intent: { metadata: { order_id: string } } }).payment_intent.metadata.order_id ===
            order.id,
      )!;
    const deliveries = stack.simulator.webhookRequests().filter((r) => r.event_id === intentId.id);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      status: 'succeeded',
      last_status_code: 200,
      attempt_count: 1,
      webhook_id: stack.endpoint!.id,
    });
    expect(fulfilment.calls - callsBefore).toBe(1);
    expect(fulfilment.shipments().filter((s) => s.orderId === order.id)).toHaveLength(1);
  });

  it("[C4] the order stays pending after the browser's confirm result, until the webhook arrives", async () => {
    const { order, checkout } = await createOrder(stack);
    stack.simulator.controls.hold();

    const confirm = await confirmInForm(checkout, 'succeeded');
    expect(confirm.body.state).toBe('succeeded'); // what the iframe tells the page
    expect((await getOrder(stack, order.id)).status).toBe('pending');
    const held = await waitFor(() => {
      const requests = stack.simulator.webhookRequests().filter((r) => r.status === 'held');
      return requests.length > 0 ? requests : undefined;
    }, 'the deliveries to be held');
    expect(held.every((r) => r.attempt_count === 0)).toBe(true);
    expect((await getOrder(stack, order.id)).status).toBe('pending');

    stack.simulator.controls.release();
    await waitFor(
      async () => ((await getOrder(stack, order.id)).status === 'paid' ? true : undefined),
      'the order to be paid',
    );
  });

  it('[C2] the embed token confirms once: a second confirm is refused and the order is shipped once', async () => {
    const { order, checkout } = await createOrder(stack);
    expect((await confirmInForm(checkout, 'succeeded')).status).toBe(200);
    expect((await confirmInForm(checkout, 'succeeded')).status).toBe(409);
    await waitFor(
      async () => ((await getOrder(stack, order.id)).status === 'paid' ? true : undefined),
      'the order to be paid',
    );
    await stack.simulator.waitForIdle();
    expect(fulfilment.shipments().filter((s) => s.orderId === order.id)).toHaveLength(1);
  });

  it('[W10] registers its webhook endpoint for exactly the event types its handlers listen to', () => {
    const handled = stack.app.get(PaymentEventsRegistry).handledEventTypes();
    expect(stack.endpoint?.url).toBe(`${stack.url}/payments/webhooks`);
    expect(stack.endpoint?.events).toEqual(handled);
    expect(handled).toEqual([
      'charge.requires_capture',
      'charge.succeeded',
      'payment_intent.cancelled',
      'payment_intent.errored_authorization',
      'payment_intent.errored_capture',
      'payment_intent.errored_sale',
      'payment_intent.requires_capture',
      'payment_intent.requires_confirmation',
      'payment_intent.requires_payment_method',
      'payment_intent.requires_review',
      'payment_intent.succeeded',
      'setup_intent.cancelled',
      'setup_intent.errored',
      'setup_intent.failed',
      'setup_intent.succeeded',
    ]);
  });

  it('[W14] charge.succeeded (automatic_async) retrieves the intent and notes its capture state', async () => {
    const { order, checkout } = await createOrder(stack, { amount: 700, capture_method: 'automatic_async' });
    const retrievesBefore = stack.simulator.requestCounts().byRoute['GET /payment_intents/:id'] ?? 0;
    await confirmInForm(checkout, 'succeeded');
    const noted = await waitFor(async () => {
      const current = await getOrder(stack, order.id);
      return current.notes.find((n) => n.startsWith('charge.succeeded')) ? current : undefined;
    }, 'the charge note');
    expect(noted.notes.find((n) => n.startsWith('charge.succeeded'))).toContain('intent is succeeded');
    expect(stack.simulator.requestCounts().byRoute['GET /payment_intents/:id']).toBeGreaterThan(retrievesBefore);
  });

  it('refuses an order without a positive integer amount (400), before any intent is created', async () => {
    const createsBefore = stack.simulator.requestCounts().byRoute['POST /payment_intents'] ?? 0;
    for (const amount of [0, -5, 10.5, '100', undefined]) {
      const answer = await requestJson('POST', `${stack.url}/orders`, { amount });
      expect(answer.status).toBe(400);
    }
    expect(stack.simulator.requestCounts().byRoute['POST /payment_intents'] ?? 0).toBe(createsBefore);
  });

  it('answers 404 for an unknown order and 400 for an id that is not a UUID', async () => {
    expect((await requestJson('GET', `${stack.url}/orders/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await requestJson('GET', `${stack.url}/orders/not-a-uuid`)).status).toBe(400);
  });
});

describe('sample merchant app: when the payment service refuses', () => {
  let stack: SampleStack;

  beforeAll(async () => {
    stack = await startSampleStack();
    stack.simulator.revokeApiKey(stack.env['PAYMENTS_API_KEY']!);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('[A4][A7] POST /orders answers 502 without details or the key, and stores no order', async () => {
    const answer = await requestJson<{ message: string }>('POST', `${stack.url}/orders`, { amount: 1999 });
    expect(answer.status).toBe(502);
    expect(answer.body.message).toBe('the payment service could not create the payment');
    expect(answer.text).not.toContain(stack.env['PAYMENTS_API_KEY']!);
    expect(stack.app.get(OrdersRepository).count()).toBe(0);
  });

  it('[A4][A7] POST /payment-methods/setup answers 502 without the key', async () => {
    const answer = await requestJson('POST', `${stack.url}/payment-methods/setup`);
    expect(answer.status).toBe(502);
    expect(answer.text).not.toContain(stack.env['PAYMENTS_API_KEY']!);
  });
});
