import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { PaymentsSimulator } from '../../../../lib/testing/index.js';
import { apiClient, WebhookReceiver } from './webhook-receiver.fixture.js';

/**
 * The checkout form in a real browser: a merchant page on one origin mounts the simulator's iframe
 * (another origin) with the render token, hands it the embed token, and waits for the UX signal.
 */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
// Skipped only on a machine without Chromium; CI sets REQUIRE_BROWSER=1 so a missing browser fails there.
const describeWithBrowser = existsSync(CHROMIUM) || process.env['REQUIRE_BROWSER'] === '1' ? describe : describe.skip;

/** The merchant page: mounts the iframe and records every message from it in `window.messages`. */
function merchantPage(iframeSrc: string, embedTokenByMessage: string | undefined): string {
  return `<!doctype html><html><body>
<iframe id="checkout" src="${iframeSrc}" width="400" height="300"></iframe>
<script>
  window.messages = [];
  var embedToken = ${JSON.stringify(embedTokenByMessage ?? null)};
  var frame = document.getElementById('checkout');
  window.addEventListener('message', function (event) {
    if (event.source !== frame.contentWindow) return;
    window.messages.push(event.data);
    if (event.data.type === 'payments:ready' && embedToken) {
      frame.contentWindow.postMessage({ type: 'payments:embed_token', embed_token: embedToken }, new URL(frame.src).origin);
    }
  });
</script></body></html>`;
}

/** Browser-side expression (a string: this project compiles without the DOM lib). */
const hasMessage = (type: string): string => `window.messages.some((m) => m.type === ${JSON.stringify(type)})`;

describeWithBrowser('PaymentsSimulator checkout form in a browser', () => {
  let browser: Browser;
  let sim: PaymentsSimulator;
  let simUrl: string;
  let receiver: WebhookReceiver;
  let merchant: http.Server;
  let merchantOrigin: string;
  let pageHtml = '';

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    sim = new PaymentsSimulator({ apiKeys: ['sk_test'], retrySchedule: [5] });
    // The simulator on 127.0.0.1 and the merchant on localhost: two origins, as in production.
    simUrl = await sim.start();
    receiver = new WebhookReceiver();
    sim.registerWebhookEndpoint({ url: await receiver.start() });
    merchant = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(pageHtml));
    await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
    merchantOrigin = `http://localhost:${(merchant.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    await sim?.stop();
    await receiver?.stop();
    merchant?.closeAllConnections();
    await new Promise<void>((resolve) => (merchant ? merchant.close(() => resolve()) : resolve()));
  });

  async function createIntent(
    allowedOrigins?: string[],
  ): Promise<{ id: string; embed_token: string; render_token: string }> {
    const res = await apiClient(simUrl, 'sk_test')('POST', '/payment_intents', {
      amount: 1250,
      allowed_origins: allowedOrigins,
    });
    return res.body;
  }

  it('[C1][C2][C4] Pay in the iframe confirms once, signals the parent, and the webhook follows', async () => {
    const intent = await createIntent([merchantOrigin]);
    pageHtml = merchantPage(
      `${simUrl}/embed/checkout?token=${encodeURIComponent(intent.render_token)}`,
      intent.embed_token,
    );
    const page = await browser.newPage();
    try {
      await page.goto(merchantOrigin);
      const frame = page.frameLocator('#checkout');
      await expect(frame.locator('#amount').textContent()).resolves.toContain('1250');
      await page.waitForFunction(hasMessage('payments:ready'));
      await frame.locator('#pay').click();
      await page.waitForFunction(hasMessage('payments:confirm_result'));
      const messages = await page.evaluate<unknown[]>('window.messages');
      expect(messages).toContainEqual({ type: 'payments:confirm_result', state: 'succeeded', intent_id: intent.id });
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => d.body.event)).toContain('payment_intent.succeeded');
      expect(sim.intent(intent.id)?.state).toBe('succeeded');
    } finally {
      await page.close();
    }
  });

  it('accepts the embed token in the URL fragment', async () => {
    const intent = await createIntent([merchantOrigin]);
    pageHtml = merchantPage(
      `${simUrl}/embed/checkout?token=${encodeURIComponent(intent.render_token)}#embed_token=${encodeURIComponent(intent.embed_token)}`,
      undefined,
    );
    const page = await browser.newPage();
    try {
      await page.goto(merchantOrigin);
      await page.frameLocator('#checkout').locator('#cancel').click();
      await page.waitForFunction(hasMessage('payments:confirm_result'));
      expect(sim.intent(intent.id)?.state).toBe('cancelled');
    } finally {
      await page.close();
    }
  });

  it('[C1] the form does not load inside a page whose origin the render token does not allow', async () => {
    const intent = await createIntent(['https://shop.example']);
    pageHtml = merchantPage(
      `${simUrl}/embed/checkout?token=${encodeURIComponent(intent.render_token)}`,
      intent.embed_token,
    );
    const page = await browser.newPage();
    try {
      const checkoutAnswered = page.waitForResponse((res) => res.url().includes('/embed/checkout'));
      await page.goto(merchantOrigin);
      expect((await checkoutAnswered).status()).toBe(200);
      // CSP frame-ancestors blocks the document: the frame never gets the form (or its ready message).
      const frame = page.frames().find((f) => f.url().includes('/embed/checkout'));
      const hasForm =
        frame === undefined
          ? false
          : await frame
              .locator('#pay')
              .count()
              .then((n) => n > 0)
              .catch(() => false);
      expect(hasForm).toBe(false);
      expect(await page.evaluate<unknown[]>('window.messages')).toEqual([]);
      expect(sim.intent(intent.id)?.state).toBe('requires_payment_method');
    } finally {
      await page.close();
    }
  });
});
