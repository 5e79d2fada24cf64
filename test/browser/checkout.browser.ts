import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { OrdersRepository } from '../../sample/orders/orders.repository.js';
import { startSampleStack, type SampleStack } from '../e2e/sample/sample-stack.fixture.js';
import {
  ACTION_CARD,
  launchChromium,
  pressInForm,
  screenshotPath,
  STATE_NAMES,
  UUID,
  visibleText,
} from './browser.fixture.js';

/**
 * The sample's checkout page in a real browser: the shopper presses Buy, pays inside the simulator's
 * iframe (another origin), sees "processing", and then the order as the verified webhook moved it.
 * One message per outcome (paid, failed, cancelled, needs action), no ids or state names in view,
 * the page opened at 127.0.0.1, and the message naming the fix when the form cannot load.
 * Saves docs/checkout-form.png, docs/checkout-paid.png and docs/checkout-failed.png with UPDATE_SCREENSHOTS=1.
 */
const DECLINED_CARD = '4000 0000 0000 0002';

/** The order the page created, as the server holds it. */
function orderOf(stack: SampleStack, orderId: string | null) {
  return stack.app.get(OrdersRepository).findById(orderId!)!;
}

describe('sample checkout page in a browser', () => {
  let stack: SampleStack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    stack = await startSampleStack();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 900, height: 480 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
  });
  afterEach(() => {
    stack.simulator.controls.reset();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('[A4] serves a checkout page with the price in its currency and a test-mode badge, never the API key', async () => {
    const response = await page.goto(stack.url);
    expect(response?.status()).toBe(200);
    expect(await page.content()).not.toContain(stack.env['PAYMENTS_API_KEY']!);
    await expect(page.locator('h1').textContent()).resolves.toBe('Sample shop');
    await expect(page.locator('#price').textContent()).resolves.toBe('€19.99');
    await expect(page.locator('#test-mode').isVisible()).resolves.toBe(true);
    await expect(page.locator('#test-mode').textContent()).resolves.toMatch(/test mode/i);
    await expect(page.locator('#dev-panel').isVisible()).resolves.toBe(false);
  });

  it('[C1][C4] pays inside the iframe, shows "processing", then the order paid by the webhook', async () => {
    await page.goto(stack.url);
    await page.locator('#buy').click();

    const iframe = page.locator('#order-iframe');
    await iframe.waitFor();
    const src = new URL((await iframe.getAttribute('src'))!);
    expect(src.origin).toBe(new URL(stack.env['PAYMENTS_BASE_URL']!).origin);
    expect(src.searchParams.get('token')).toEqual(expect.any(String));
    const form = page.frameLocator('#order-iframe');
    await expect(form.locator('#amount').textContent()).resolves.toBe('Amount due: €19.99');
    await expect(form.locator('#pay').textContent()).resolves.toBe('Pay €19.99');
    await expect(form.locator('#test-mode').isVisible()).resolves.toBe(true);
    // The developer's outcome chooser is not in the shopper's view.
    await expect(form.locator('#outcome').isVisible()).resolves.toBe(false);

    await page.locator('#order-section[data-stage="token-sent"]').waitFor();
    await form.locator('#pay:enabled').waitFor();
    await page.screenshot({ path: screenshotPath('checkout-form.png'), fullPage: true });

    // Hold the service's deliveries: the page must wait for the webhook, not trust the form.
    stack.simulator.controls.hold();
    await pressInForm(page, form, 'order-section', '#pay');
    await expect(form.locator('body').getAttribute('data-state')).resolves.toBe('succeeded');
    await page.locator('#order-status[data-status="processing"]').waitFor();
    const shopperView = await visibleText(page);
    expect(shopperView).not.toMatch(UUID);
    for (const state of STATE_NAMES) expect(shopperView).not.toContain(state);

    stack.simulator.controls.release();
    await page.locator('#order-status[data-status="paid"]').waitFor({ timeout: 30_000 });
    await expect(page.locator('#order-status').textContent()).resolves.toContain('Payment received');
    expect(orderOf(stack, await page.locator('body').getAttribute('data-order-id')).status).toBe('paid');
    const settledView = await visibleText(page);
    expect(settledView).not.toMatch(UUID);

    await page.screenshot({ path: screenshotPath('checkout-paid.png'), fullPage: true });
    expect(await page.content()).not.toContain(stack.env['PAYMENTS_API_KEY']!);
  });

  it('shows "declined" for a declined card and lets the shopper try again', async () => {
    await page.goto(stack.url);
    await page.locator('#buy').click();
    const form = page.frameLocator('#order-iframe');
    await pressInForm(page, form, 'order-section', '#pay', DECLINED_CARD);
    await page.locator('#order-status[data-status="failed"]').waitFor({ timeout: 30_000 });
    const text = await page.locator('#order-status').textContent();
    expect(text).toContain('declined');
    expect(text).toContain('Nothing was charged');
    expect(text).not.toMatch(/errored|cancel/i);
    expect(orderOf(stack, await page.locator('body').getAttribute('data-order-id')).status).toBe('failed');
    await expect(page.locator('#buy').isEnabled()).resolves.toBe(true);
    await page.screenshot({ path: screenshotPath('checkout-failed.png'), fullPage: true });
  });

  it('says "cancelled" when the shopper cancels in the form, and the order is cancelled', async () => {
    await page.goto(stack.url);
    await page.locator('#buy').click();
    await pressInForm(page, page.frameLocator('#order-iframe'), 'order-section', '#cancel');
    await page.locator('#order-status[data-status="cancelled"]').waitFor({ timeout: 30_000 });
    const text = await page.locator('#order-status').textContent();
    expect(text).toContain('Payment cancelled');
    expect(text).not.toMatch(/failed|try again/i);
    expect(orderOf(stack, await page.locator('body').getAttribute('data-order-id')).status).toBe('cancelled');
  });

  it('says the payment needs action (not "processing" for minutes) and offers to cancel the order', async () => {
    await page.goto(stack.url);
    await page.locator('#buy').click();
    await pressInForm(page, page.frameLocator('#order-iframe'), 'order-section', '#pay', ACTION_CARD);
    await page.locator('#order-status[data-status="action"]').waitFor({ timeout: 30_000 });
    await expect(page.locator('#order-status').textContent()).resolves.toContain('needs one more step');
    const orderId = await page.locator('body').getAttribute('data-order-id');
    expect(orderOf(stack, orderId)).toMatchObject({ status: 'pending', action: 'requires_capture' });
    for (const state of STATE_NAMES) expect(await visibleText(page)).not.toContain(state);
    // Not stuck: the shopper can start another order meanwhile.
    await expect(page.locator('#buy').isEnabled()).resolves.toBe(true);

    await page.locator('#cancel-order').click();
    await page.locator('#order-status[data-status="cancelled"]').waitFor({ timeout: 30_000 });
    expect(orderOf(stack, orderId).status).toBe('cancelled');
  });

  it('shows the developer panel and the outcome chooser only with ?dev=1', async () => {
    await page.goto(`${stack.url}/?dev=1`);
    await expect(page.locator('#dev-panel').isVisible()).resolves.toBe(true);
    await page.locator('#buy').click();
    const form = page.frameLocator('#order-iframe');
    await page.locator('#order-section[data-stage="token-sent"]').waitFor();
    await expect(form.locator('#outcome').isVisible()).resolves.toBe(true);
    await form.locator('#outcome').selectOption('errored_sale');
    await form.locator('#submit').click();
    await page.locator('#order-status[data-status="failed"]').waitFor({ timeout: 30_000 });
    // The developer sees the order id.
    await expect(page.locator('#dev-order').textContent()).resolves.toMatch(UUID);
  });

  it('saves a card inside the iframe and shows it saved once the webhook arrives', async () => {
    await page.goto(stack.url);
    await page.locator('#save-card').click();
    const form = page.frameLocator('#setup-iframe');
    await pressInForm(page, form, 'setup-section', '#pay');
    await page.locator('#setup-status[data-status="saved"]').waitFor({ timeout: 30_000 });
    await expect(page.locator('#setup-status').textContent()).resolves.toContain('Card saved');
  });

  it('works when the shop is opened at http://127.0.0.1:PORT instead of localhost', async () => {
    const port = new URL(stack.url).port;
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.locator('#buy').click();
    const form = page.frameLocator('#order-iframe');
    await pressInForm(page, form, 'order-section', '#pay');
    await page.locator('#order-status[data-status="paid"]').waitFor({ timeout: 30_000 });
  });

  it('logs no error in the browser console (CSP, messaging)', () => {
    expect(consoleErrors).toEqual([]);
  });
});

describe('sample checkout page when the payment form cannot load', () => {
  let stack: SampleStack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startSampleStack({
      env: { SHOP_ALLOWED_ORIGINS: 'http://shop.test:8443', SHOP_FORM_LOAD_TIMEOUT_MS: '1500' },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('opened at an address that may not frame the form, says so at once and names PUBLIC_URL and SHOP_ALLOWED_ORIGINS', async () => {
    const page = await browser.newPage();
    const port = new URL(stack.url).port;
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.locator('#buy').click();
    await page.locator('#order-status[data-status="form-error"]').waitFor({ timeout: 5_000 });
    const text = (await page.locator('#order-status').textContent())!;
    expect(text).toContain(`http://127.0.0.1:${port}`);
    expect(text).toContain('PUBLIC_URL');
    expect(text).toContain('SHOP_ALLOWED_ORIGINS');
    await expect(page.locator('#buy').isEnabled()).resolves.toBe(true);
    await page.close();
  });

  it('when the form never answers (unreachable), shows what to check within the load timeout', async () => {
    const page = await browser.newPage();
    const formOrigin = new URL(stack.env['PAYMENTS_CHECKOUT_URL']!).origin;
    // The browser cannot reach the form (the service is down, or a proxy blocks it).
    await page.route(`${formOrigin}/**`, (route) => route.abort('connectionrefused'));
    await page.goto(stack.url);
    await page.locator('#buy').click();
    // The order is created and the form mounted (slow on a busy machine), then the page waits 1.5 s.
    await page.locator('#order-section[data-stage="mounted"]').waitFor({ timeout: 30_000 });
    const mounted = Date.now();
    await page.locator('#order-status[data-status="form-error"]').waitFor({ timeout: 30_000 });
    expect(Date.now() - mounted).toBeGreaterThanOrEqual(1_000);
    const text = (await page.locator('#order-status').textContent())!;
    expect(text).toContain('did not load');
    expect(text).toContain('PAYMENTS_CHECKOUT_URL');
    await page.close();
  });
});
