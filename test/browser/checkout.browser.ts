import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { chromium, type Browser, type FrameLocator, type Page } from 'playwright-core';
import { startSampleStack, waitFor, type SampleStack } from '../e2e/sample/sample-stack.fixture.js';

/**
 * The sample's checkout page in a real browser: the shopper presses Buy, pays inside the simulator's
 * iframe (another origin), sees "processing", and then the order as the verified webhook moved it.
 * Saves the paid page as a screenshot: docs/checkout-paid.png (the README's) with UPDATE_SCREENSHOTS=1,
 * else in the temp folder, so that a test run leaves the work tree clean.
 */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const SCREENSHOT =
  process.env['UPDATE_SCREENSHOTS'] === '1'
    ? resolve(process.cwd(), 'docs/checkout-paid.png')
    : resolve(tmpdir(), 'nestjs-payments-checkout-paid.png');

if (!existsSync(CHROMIUM)) {
  throw new Error(`No chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
}

/** Presses a button of the embedded form once the page has handed it the embed token. */
async function pressInForm(page: Page, form: FrameLocator, sectionId: string, button: string): Promise<void> {
  await page.locator(`#${sectionId}[data-stage="token-sent"]`).waitFor();
  // The token travels by postMessage; if the click beat it, the form says so and nothing was sent.
  for (let attempt = 0; attempt < 20; attempt += 1) {
    await form.locator(button).click();
    const state = await waitFor(async () => {
      const confirmed = await form.locator('body').getAttribute('data-state');
      if (confirmed) return confirmed;
      const status = await form.locator('#status').textContent();
      return status?.includes('No embed token yet') ? 'retry' : undefined;
    }, 'the form to confirm');
    if (state !== 'retry') return;
  }
  throw new Error('the form never received the embed token');
}

describe('sample checkout page in a browser', () => {
  let stack: SampleStack;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    stack = await startSampleStack();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await browser.newPage({ viewport: { width: 900, height: 820 } });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('[A4] serves a checkout page that never contains the API key', async () => {
    const response = await page.goto(stack.url);
    expect(response?.status()).toBe(200);
    expect(await page.content()).not.toContain(stack.env['PAYMENTS_API_KEY']!);
    await expect(page.locator('h1').textContent()).resolves.toBe('Sample shop');
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
    await expect(form.locator('#title').textContent()).resolves.toContain('Pay 1999');

    // Hold the service's deliveries: the page must wait for the webhook, not trust the form.
    stack.simulator.controls.hold();
    await pressInForm(page, form, 'order-section', '#pay');
    await expect(form.locator('body').getAttribute('data-state')).resolves.toBe('succeeded');
    await page.locator('#order-status[data-status="processing"]').waitFor();
    await expect(page.locator('#order-status').textContent()).resolves.toContain('Processing');

    stack.simulator.controls.release();
    await page.locator('#order-status[data-status="paid"]').waitFor({ timeout: 30_000 });
    await expect(page.locator('#order-status').textContent()).resolves.toContain('Paid');

    const orderId = await page.locator('body').getAttribute('data-order-id');
    const order = (await (await fetch(`${stack.url}/orders/${orderId}`)).json()) as { status: string };
    expect(order.status).toBe('paid');

    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(await page.content()).not.toContain(stack.env['PAYMENTS_API_KEY']!);
  });

  it('saves a card inside the iframe and shows it saved once the webhook arrives', async () => {
    await page.goto(stack.url);
    await page.locator('#save-card').click();
    const form = page.frameLocator('#setup-iframe');
    await pressInForm(page, form, 'setup-section', '#pay');
    await page.locator('#setup-status[data-status="saved"]').waitFor({ timeout: 30_000 });
  });

  it('logs no error in the browser console (CSP, messaging)', () => {
    expect(consoleErrors).toEqual([]);
  });
});
