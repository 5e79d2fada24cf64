import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolveCheckoutFraming } from '../../../sample/checkout/checkout-framing.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import type { CheckoutSession, OrderView } from './sample-http.helpers.js';
import { requestJson, startSampleStack, type SampleStack } from './sample-stack.fixture.js';

const PUBLIC = 'http://localhost:3000';

describe('which origins may frame the payment form (resolveCheckoutFraming)', () => {
  it('allows PUBLIC_URL when the request shows no Origin (a server-side call)', () => {
    expect(resolveCheckoutFraming(PUBLIC, [], {})).toEqual({
      allowedOrigins: [PUBLIC],
      pageOrigin: undefined,
      pageAllowed: true,
    });
  });

  it('allows localhost when the page was opened at localhost', () => {
    expect(resolveCheckoutFraming(PUBLIC, [], { origin: PUBLIC, host: 'localhost:3000' })).toEqual({
      allowedOrigins: [PUBLIC],
      pageOrigin: PUBLIC,
      pageAllowed: true,
    });
  });

  it('adds http://127.0.0.1:3000 when the page was opened there', () => {
    const framing = resolveCheckoutFraming(PUBLIC, [], { origin: 'http://127.0.0.1:3000', host: '127.0.0.1:3000' });
    expect(framing.allowedOrigins).toEqual([PUBLIC, 'http://127.0.0.1:3000']);
    expect(framing.pageAllowed).toBe(true);
  });

  it('adds another address (a LAN address, a forwarded port) the page was opened at', () => {
    const framing = resolveCheckoutFraming(PUBLIC, [], {
      origin: 'http://192.168.1.20:8080',
      host: '192.168.1.20:8080',
    });
    expect(framing.allowedOrigins).toEqual([PUBLIC, 'http://192.168.1.20:8080']);
    expect(framing.pageAllowed).toBe(true);
  });

  it('does not take an Origin whose host is not the request Host (and says the page is not allowed)', () => {
    const framing = resolveCheckoutFraming(PUBLIC, [], { origin: 'https://evil.example', host: 'localhost:3000' });
    expect(framing).toEqual({ allowedOrigins: [PUBLIC], pageOrigin: 'https://evil.example', pageAllowed: false });
  });

  it('ignores an Origin that is not an http(s) origin', () => {
    expect(resolveCheckoutFraming(PUBLIC, [], { origin: 'null', host: 'localhost:3000' }).allowedOrigins).toEqual([
      PUBLIC,
    ]);
    expect(
      resolveCheckoutFraming(PUBLIC, [], { origin: 'http://localhost:3000/path', host: 'localhost:3000' })
        .allowedOrigins,
    ).toEqual([PUBLIC]);
  });

  it('with SHOP_ALLOWED_ORIGINS, allows those and PUBLIC_URL only', () => {
    const listed = resolveCheckoutFraming(PUBLIC, ['http://127.0.0.1:3000'], {
      origin: 'http://127.0.0.1:3000',
      host: '127.0.0.1:3000',
    });
    expect(listed).toEqual({
      allowedOrigins: ['http://127.0.0.1:3000', PUBLIC],
      pageOrigin: 'http://127.0.0.1:3000',
      pageAllowed: true,
    });
    const other = resolveCheckoutFraming(PUBLIC, ['http://127.0.0.1:3000'], {
      origin: 'http://10.0.0.5:3000',
      host: '10.0.0.5:3000',
    });
    expect(other.allowedOrigins).toEqual(['http://127.0.0.1:3000', PUBLIC]);
    expect(other.pageAllowed).toBe(false);
  });
});

describe('sample merchant app: the form is framable where the shop page was opened', () => {
  let stack: SampleStack;
  let port: string;

  beforeAll(async () => {
    stack = await startSampleStack();
    port = new URL(stack.url).port;
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** `POST /orders` as a page opened at `http://{host}:{port}` sends it. */
  async function orderFrom(host: string): Promise<CheckoutSession> {
    const origin = `http://${host}:${port}`;
    const answer = await requestJson<{ order: OrderView; checkout: CheckoutSession }>(
      'POST',
      `${origin}/orders`,
      { amount: 1999 },
      { origin },
    );
    expect(answer.status).toBe(201);
    return answer.body.checkout;
  }

  async function frameAncestorsOf(checkout: CheckoutSession): Promise<string> {
    const res = await fetch(checkout.formUrl);
    expect(res.status).toBe(200);
    return /frame-ancestors ([^;]+)/.exec(res.headers.get('content-security-policy') ?? '')![1]!;
  }

  it.each(['localhost', '127.0.0.1', '127.0.0.2'])(
    'a page opened at http://%s:PORT may frame the form (CSP frame-ancestors)',
    async (host) => {
      const checkout = await orderFrom(host);
      const origin = `http://${host}:${port}`;
      expect(checkout.frameAncestors).toContain(origin);
      expect((await frameAncestorsOf(checkout)).split(' ')).toContain(origin);
    },
  );

  it('the form shows the amount with its currency (metadata.currency), not a bare number', async () => {
    const checkout = await orderFrom('localhost');
    const html = await (await fetch(checkout.formUrl)).text();
    expect(html).toContain('Pay €19.99');
    expect(html).toContain('Test mode');
    expect(html).not.toMatch(/<details id="dev-panel" open/);
  });
});

describe('sample merchant app with SHOP_ALLOWED_ORIGINS', () => {
  let stack: SampleStack;

  beforeAll(async () => {
    stack = await startSampleStack({ env: { SHOP_ALLOWED_ORIGINS: 'http://shop.test:8443' } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('frames the form for the listed origins and PUBLIC_URL only, whatever address the page was opened at', async () => {
    const port = new URL(stack.url).port;
    const origin = `http://127.0.0.1:${port}`;
    const answer = await requestJson<{ checkout: CheckoutSession }>(
      'POST',
      `${origin}/orders`,
      { amount: 1999 },
      { origin },
    );
    expect(answer.body.checkout.frameAncestors).toEqual(['http://shop.test:8443', `http://localhost:${port}`]);
  });
});

describe('sample merchant app: the server log names the fix when the form cannot load', () => {
  let stack: SampleStack;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    stack = await startSampleStack({ env: { SHOP_ALLOWED_ORIGINS: 'http://shop.test:8443' }, logger });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('warns when a checkout starts from an address that may not frame the form', async () => {
    const port = new URL(stack.url).port;
    const origin = `http://127.0.0.1:${port}`;
    expect((await requestJson('POST', `${origin}/orders`, { amount: 1999 }, { origin })).status).toBe(201);
    const line = logger.messages('warn').find((m) => m.includes('may not frame the payment form'))!;
    expect(line).toContain(origin);
    expect(line).toContain('PUBLIC_URL');
    expect(line).toContain('SHOP_ALLOWED_ORIGINS');
  });

  it("logs the page's report of a form that did not load once per origin, at warn level, and ignores junk", async () => {
    const report = (body: unknown) => requestJson('POST', `${stack.url}/checkout/form-load-failed`, body);
    expect((await report({ origin: 'http://10.1.2.3:3000', reason: 'timeout' })).status).toBe(204);
    expect((await report({ origin: 'http://10.1.2.3:3000', reason: 'timeout' })).status).toBe(204);
    expect((await report({ origin: 'javascript:alert(1)' })).status).toBe(204);
    expect((await report({ origin: 'http://x\u001b[31m.example' })).status).toBe(204);
    expect((await report('not json at all')).status).toBeLessThan(500);
    const lines = logger.messages('warn').filter((m) => m.includes('did not load for a page at'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('http://10.1.2.3:3000');
    expect(lines[0]).toContain('PAYMENTS_CHECKOUT_URL');
    expect(logger.messages('error')).toEqual([]);
    expect(logger.text()).not.toContain(stack.env['PAYMENTS_API_KEY']!);
  });
});
