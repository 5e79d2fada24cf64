import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { startSampleStack, type SampleStack } from '../e2e/sample/sample-stack.fixture.js';
import { ACTION_CARD, launchChromium, pressInForm, screenshotPath } from './browser.fixture.js';

/** A computed style property of the element, in px (evaluated in the page). */
function cssPx(page: Page, selector: string, property: string): Promise<number> {
  return page.evaluate<number, [string, string]>(
    ([sel, prop]) =>
      // The page's own globals: this function runs in the browser.

      parseFloat((globalThis as any).getComputedStyle((globalThis as any).document.querySelector(sel))[prop]),
    [selector, property],
  );
}

/**
 * The sample's pages on a 390 px wide phone (issue 20, item 9): nothing wider than the viewport (no
 * sideways scrolling), the test-mode badge on one line, the admin token box inside its card. Saves
 * docs/checkout-narrow.png, docs/checkout-narrow-form.png, docs/admin-narrow.png and
 * docs/admin-narrow-orders.png with UPDATE_SCREENSHOTS=1.
 */
const TOKEN = `admin-${randomBytes(12).toString('hex')}`;

/** How far the page is wider than the viewport, in CSS px (0 when nothing overflows). */
function overflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
}

/** The element's box, asserted present. */
async function box(page: Page, selector: string): Promise<{ x: number; y: number; width: number; height: number }> {
  const found = await page.locator(selector).boundingBox();
  if (found === null) throw new Error(`${selector} is not laid out`);
  return found;
}

describe('the sample shop at 390 px wide', () => {
  let stack: SampleStack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    stack = await startSampleStack({ env: { SHOP_ADMIN_TOKEN: TOKEN } });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('checkout: no sideways scrolling, the test-mode badge on one line beside the shop name', async () => {
    await page.goto(stack.url);
    await page.locator('#test-mode').waitFor();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    const lines = await page.locator('#test-mode').evaluate((badge) => badge.getClientRects().length);
    expect(lines).toBe(1);
    const badge = await box(page, '#test-mode');
    const lineHeight = (await cssPx(page, '#test-mode', 'fontSize')) * 2.2; // one line with its padding
    expect(badge.height).toBeLessThan(lineHeight);
    expect(badge.x + badge.width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: screenshotPath('checkout-narrow.png'), fullPage: true });
  });

  it("checkout: the payment form's test-mode badge stays on one line inside the form, no sideways scrolling", async () => {
    await page.goto(stack.url);
    await page.locator('#buy').click();
    await page.locator('#order-section[data-stage="token-sent"]').waitFor();
    const form = page.frameLocator('#order-iframe');
    const badge = form.locator('#test-mode');
    await badge.waitFor();
    expect(await badge.evaluate((el) => el.getClientRects().length)).toBe(1);
    const fontPx = await badge.evaluate((el) =>
      Number.parseFloat(el.ownerDocument.defaultView!.getComputedStyle(el).fontSize),
    );
    expect((await badge.boundingBox())!.height).toBeLessThan(fontPx * 2.2);
    const frame = (await page.locator('#order-iframe').boundingBox())!;
    const box = (await badge.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(frame.x + frame.width);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: screenshotPath('checkout-narrow-form.png'), fullPage: true });
  });

  it('admin: the token box and its button stay inside the sign-in card, no sideways scrolling', async () => {
    await page.goto(`${stack.url}/admin`);
    await page.locator('#sign-in-card').waitFor();
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    // Inside the card's content box: its border box less its padding.
    const card = await box(page, '#sign-in-card');
    const padding = [
      await cssPx(page, '#sign-in-card', 'paddingLeft'),
      await cssPx(page, '#sign-in-card', 'paddingRight'),
    ];
    for (const selector of ['#token', '#sign-in']) {
      const inner = await box(page, selector);
      expect(inner.x).toBeGreaterThanOrEqual(card.x + padding[0]! - 0.5);
      expect(inner.x + inner.width).toBeLessThanOrEqual(card.x + card.width - padding[1]! + 0.5);
    }
    await page.screenshot({ path: screenshotPath('admin-narrow.png'), fullPage: true });
  });

  it('admin: an order waiting for capture reads "pending needs capture", not the state name', async () => {
    await page.goto(stack.url);
    await page.locator('#buy').click();
    await pressInForm(page, page.frameLocator('#order-iframe'), 'order-section', '#pay', ACTION_CARD);
    await page.locator('#order-status[data-status="action"]').waitFor({ timeout: 30_000 });
    const orderId = (await page.locator('body').getAttribute('data-order-id'))!;

    await page.goto(`${stack.url}/admin`);
    await page.locator('#token').fill(TOKEN);
    await page.locator('#sign-in').click();
    const row = page.locator(`tr[data-order-id="${orderId}"]`);
    await row.waitFor();
    const text = (await row.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain('pending needs capture');
    expect(text).not.toContain('requires');
    expect(await overflow(page)).toBeLessThanOrEqual(0); // wide tables scroll inside their card
    await page.screenshot({ path: screenshotPath('admin-narrow-orders.png'), fullPage: true });
  });
});
