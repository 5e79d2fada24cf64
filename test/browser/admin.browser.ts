import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { PaymentDeliveryJournal } from '../../lib/index.js';
import { FulfilmentService } from '../../sample/orders/fulfilment.service.js';
import { OrdersRepository } from '../../sample/orders/orders.repository.js';
import { FlakyFulfilment } from '../e2e/sample/fulfilment.doubles.js';
import { startSampleStack, waitFor, type SampleStack } from '../e2e/sample/sample-stack.fixture.js';
import { launchChromium, screenshotPath } from './browser.fixture.js';

/**
 * The operator view `/admin` in a real browser, with the sample in queued mode (BullMQ on the local
 * Redis): a payment whose fulfilment fails lands in the queue's failed set (one attempt per event
 * here), the operator signs in with the admin token, sees it, and replays it; the handler then runs
 * to completion and the order ships exactly once. Saves docs/admin.png with UPDATE_SCREENSHOTS=1.
 */
const TOKEN = `admin-${randomBytes(12).toString('hex')}`;
const QUEUE = `sample-shop-browser-${randomBytes(4).toString('hex')}`;
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Deletes every key of this suite's queue. */
async function dropQueueKeys(): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `bull:${QUEUE}:*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

describe('sample operator view in a browser (queued mode)', () => {
  let stack: SampleStack;
  let browser: Browser;
  let page: Page;
  const fulfilment = new FlakyFulfilment(1);

  beforeAll(async () => {
    stack = await startSampleStack({
      env: {
        SHOP_ADMIN_TOKEN: TOKEN,
        SAMPLE_QUEUE_REDIS_URL: REDIS_URL,
        SAMPLE_QUEUE_NAME: QUEUE,
        SAMPLE_QUEUE_ATTEMPTS: '1',
      },
      configure: (builder) => builder.overrideProvider(FulfilmentService).useValue(fulfilment),
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1180, height: 600 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await dropQueueKeys();
  });

  it('asks for the admin token, and refuses a wrong one', async () => {
    await page.goto(`${stack.url}/admin`);
    await page.locator('#sign-in-card').waitFor();
    await expect(page.locator('#sign-in-card').textContent()).resolves.toContain('SHOP_ADMIN_TOKEN');
    await page.locator('#token').fill('not-the-admin-token-at-all');
    await page.locator('#sign-in').click();
    await page.locator('#sign-in-error:text("not the admin token")').waitFor();
    await expect(page.locator('#view').isVisible()).resolves.toBe(false);
  });

  it('replays a failed delivery from the failed set, which then ends handled, the order shipped exactly once', async () => {
    // The shopper pays; the handler marks the order paid, then fulfilment throws (warehouse down).
    await page.goto(stack.url);
    await page.locator('#buy').click();
    await page.locator('#order-section[data-stage="token-sent"]').waitFor();
    await page.frameLocator('#order-iframe').locator('#pay').click();
    await page.locator('#order-status[data-status="paid"]').waitFor({ timeout: 30_000 });
    const orderId = (await page.locator('body').getAttribute('data-order-id'))!;
    expect(fulfilment.calls).toBe(1);
    expect(fulfilment.shipments()).toEqual([]);

    // Someone posts a forged delivery: it is refused, and counted.
    const forged = await fetch(`${stack.url}/payments/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,Zm9yZ2Vk',
      },
      body: '{}',
    });
    expect(forged.status).toBe(401);

    // The operator signs in and sees the event in the failed set.
    await page.goto(`${stack.url}/admin`);
    await page.locator('#token').fill(TOKEN);
    await page.locator('#sign-in').click();
    // The page sets data-processing once the signed-in overview has loaded: wait for it, then read it.
    await page.locator('body[data-processing]').waitFor({ timeout: 30_000 });
    await expect(page.locator('body').getAttribute('data-processing')).resolves.toBe('queue');
    const row = page.locator('#failed-table tbody tr', { hasText: 'payment_intent.succeeded' });
    await row.waitFor({ timeout: 30_000 });
    const eventId = (await row.getAttribute('data-event-id'))!;
    await expect(row.textContent()).resolves.toContain('failed');
    await page.locator(`#deliveries tr[data-event-id="${eventId}"][data-last-dispatch="failed"]`).waitFor();
    await expect(page.locator('#t-failures').textContent()).resolves.not.toBe('0');
    await page.locator('#rejections tbody tr', { hasText: 'invalid_signature' }).waitFor();
    await page.screenshot({ path: screenshotPath('admin.png'), fullPage: true });

    // Replay: the job runs again, the handler completes, and the failed set is empty.
    await row.locator('button.replay').click();
    await page.locator('#message:text("Replayed")').waitFor();
    await page
      .locator(`#deliveries tr[data-event-id="${eventId}"][data-last-dispatch="handled"]`)
      .waitFor({ timeout: 30_000 });
    await page
      .locator(`#failed-table tbody tr[data-event-id="${eventId}"]`)
      .waitFor({ state: 'detached', timeout: 30_000 });

    expect(fulfilment.shipments().map((s) => s.orderId)).toEqual([orderId]);
    expect(fulfilment.calls).toBe(2);
    expect(stack.app.get(OrdersRepository).findById(orderId)!.status).toBe('paid');
    const entry = stack.app.get(PaymentDeliveryJournal).entry(eventId)!;
    expect(entry).toMatchObject({
      deliveries: 1,
      dispatches: 2,
      lastDispatch: 'handled',
      lastAnswer: { status: 200, outcome: 'enqueued' },
    });

    // A second replay finds nothing to replay, and the handler does not run again.
    const again = await fetch(`${stack.url}/admin/api/events/${eventId}/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(again.status).toBe(404);
    await stack.simulator.waitForIdle();
    await waitFor(async () => (fulfilment.calls === 2 ? true : undefined), 'no further fulfilment');
    expect(fulfilment.shipments()).toHaveLength(1);
  });
});
