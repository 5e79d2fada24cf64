import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AdminOverview } from '../../../sample/admin/admin-overview.service.js';
import { confirmInForm, createOrder, getOrder } from './sample-http.helpers.js';
import { requestJson, startSampleStack, waitFor, type SampleStack } from './sample-stack.fixture.js';

const TOKEN = 'admin-token-for-tests-0123456789';

describe('sample operator view /admin without SHOP_ADMIN_TOKEN', () => {
  let stack: SampleStack;
  beforeAll(async () => {
    stack = await startSampleStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is disabled: the page and its API answer 404, naming the variable that enables it', async () => {
    const page = await fetch(`${stack.url}/admin`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('SHOP_ADMIN_TOKEN');
    expect(
      (await requestJson('GET', `${stack.url}/admin/api/overview`, undefined, { authorization: `Bearer ${TOKEN}` }))
        .status,
    ).toBe(404);
  });
});

describe('sample operator view /admin with SHOP_ADMIN_TOKEN (inline processing)', () => {
  let stack: SampleStack;
  const overview = () =>
    requestJson<AdminOverview>('GET', `${stack.url}/admin/api/overview`, undefined, {
      authorization: `Bearer ${TOKEN}`,
    });

  beforeAll(async () => {
    stack = await startSampleStack({ env: { SHOP_ADMIN_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('serves the page, which holds no data and says it is token-protected', async () => {
    const res = await fetch(`${stack.url}/admin`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('SHOP_ADMIN_TOKEN');
    expect(html).not.toContain(TOKEN);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('refuses the API without the token, with a wrong token, and with the token in another scheme', async () => {
    expect((await requestJson('GET', `${stack.url}/admin/api/overview`)).status).toBe(401);
    expect(
      (await requestJson('GET', `${stack.url}/admin/api/overview`, undefined, { authorization: `Bearer ${TOKEN}x` }))
        .status,
    ).toBe(401);
    expect(
      (await requestJson('GET', `${stack.url}/admin/api/overview`, undefined, { authorization: `Basic ${TOKEN}` }))
        .status,
    ).toBe(401);
    const orderId = '0f8e9c1a-4c1e-4a57-9f6b-2f3c9d41aaaa';
    expect((await requestJson('POST', `${stack.url}/admin/api/orders/${orderId}/cancel`)).status).toBe(401);
  });

  it('shows a paid order, its delivery answered 200 handled with the handler run, and a duplicate dropped', async () => {
    const { order, checkout } = await createOrder(stack);
    await confirmInForm(checkout, 'succeeded');
    await waitFor(
      async () => ((await getOrder(stack, order.id)).status === 'paid' ? true : undefined),
      'the order to be paid',
    );
    await stack.simulator.waitForIdle();
    const paid = stack.simulator
      .webhookRequests()
      .find((r) => r.event === 'payment_intent.succeeded' && r.body.includes(order.id))!;
    // The service resends the delivery: the receiver drops it as a duplicate.
    expect(
      (
        await requestJson('POST', `${stack.env['PAYMENTS_BASE_URL']}/webhook_requests/${paid.id}/resend`, undefined, {
          'x-api-key': stack.env['PAYMENTS_API_KEY']!,
          'x-api-version': '1',
        })
      ).status,
    ).toBe(202);
    await stack.simulator.waitForIdle();

    const answer = await overview();
    expect(answer.status).toBe(200);
    expect(answer.body.processing).toBe('inline');
    const entry = answer.body.deliveries.find((d) => d.eventId === paid.event_id)!;
    expect(entry).toMatchObject({
      type: 'payment_intent.succeeded',
      deliveries: 2,
      lastAnswer: { status: 200, outcome: 'duplicate' },
    });
    expect(answer.body.totals.duplicatesDropped).toBeGreaterThanOrEqual(1);
    expect(answer.body.totals.handlerRuns).toBeGreaterThanOrEqual(1);
    expect(answer.body.orders.find((o) => o.id === order.id)).toMatchObject({
      status: 'paid',
      amount: 1999,
      currency: 'EUR',
    });
    expect(answer.text).not.toContain(stack.env['PAYMENTS_API_KEY']!);
  });

  it('cancels a pending order that needs action', async () => {
    const { order, checkout } = await createOrder(stack);
    await confirmInForm(checkout, 'requires_capture');
    await waitFor(
      async () => ((await getOrder(stack, order.id)).action === 'requires_capture' ? true : undefined),
      'the action',
    );
    const cancel = await requestJson('POST', `${stack.url}/admin/api/orders/${order.id}/cancel`, undefined, {
      authorization: `Bearer ${TOKEN}`,
    });
    expect(cancel.status).toBe(200);
    const after = await getOrder(stack, order.id);
    expect(after.status).toBe('cancelled');
    expect(after.action).toBeUndefined();
    expect(
      (
        await requestJson('POST', `${stack.url}/admin/api/orders/${order.id}/cancel`, undefined, {
          authorization: `Bearer ${TOKEN}`,
        })
      ).status,
    ).toBe(409);
  });

  it('counts a forged delivery as refused, with its status and reason only', async () => {
    const before = (await overview()).body.totals.rejected;
    const forged = await fetch(`${stack.url}/payments/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,Zm9yZ2Vk',
      },
      body: JSON.stringify({ id: '0f8e9c1a-4c1e-4a57-9f6b-2f3c9d41cccc', event: 'payment_intent.succeeded' }),
    });
    expect(forged.status).toBe(401);
    const answer = await overview();
    expect(answer.body.totals.rejected).toBe(before + 1);
    expect(answer.body.rejections[0]).toMatchObject({ status: 401, reason: 'invalid_signature' });
    expect(answer.text).not.toContain('0f8e9c1a-4c1e-4a57-9f6b-2f3c9d41cccc');
  });

  it('has no failed set to replay in inline mode (404)', async () => {
    const replay = await requestJson(
      'POST',
      `${stack.url}/admin/api/events/0f8e9c1a-4c1e-4a57-9f6b-2f3c9d41aaaa/replay`,
      undefined,
      { authorization: `Bearer ${TOKEN}` },
    );
    expect(replay.status).toBe(404);
  });
});
