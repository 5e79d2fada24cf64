import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PaymentsSimulator } from '../../../../lib/testing/index.js';
import { apiClient, confirm } from './webhook-receiver.fixture.js';

describe('PaymentsSimulator embedded checkout', () => {
  let now: number;
  let sim: PaymentsSimulator;
  let baseUrl: string;
  let api: ReturnType<typeof apiClient>;

  beforeEach(async () => {
    now = Date.UTC(2026, 0, 1);
    sim = new PaymentsSimulator({ apiKeys: ['sk_test'], now: () => now });
    baseUrl = await sim.start();
    api = apiClient(baseUrl, 'sk_test');
  });
  afterEach(() => sim.stop());

  describe('[C2] confirm with the embed token', () => {
    it('[C2] moves the intent to the chosen outcome', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 700 })).body;
      const res = await confirm(baseUrl, intent.embed_token, 'requires_review');
      expect(res).toEqual({ status: 200, body: { id: intent.id, object: 'payment_intent', state: 'requires_review' } });
      expect((await api('GET', `/payment_intents/${intent.id}`)).body.state).toBe('requires_review');
    });

    it('[C2] authorises exactly one confirm: a second one with the same token gets 409', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 700 })).body;
      expect((await confirm(baseUrl, intent.embed_token, 'succeeded')).status).toBe(200);
      const second = await confirm(baseUrl, intent.embed_token, 'cancelled');
      expect(second.status).toBe(409);
      expect(second.body.error.code).toBe('embed_token_used');
      expect((await api('GET', `/payment_intents/${intent.id}`)).body.state).toBe('succeeded');
    });

    it('[C2] of two concurrent confirms with one token, exactly one succeeds', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 700 })).body;
      const results = await Promise.all([
        confirm(baseUrl, intent.embed_token, 'succeeded'),
        confirm(baseUrl, intent.embed_token, 'cancelled'),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    });

    it('[C2] confirms a setup intent with a setup outcome', async () => {
      const intent = (await api('POST', '/setup_intents', {})).body;
      expect((await confirm(baseUrl, intent.embed_token, 'failed')).body.state).toBe('failed');
    });

    it('[C2] refuses a confirm without Authorization: Embed with 401', async () => {
      expect((await confirm(baseUrl, undefined, 'succeeded')).status).toBe(401);
    });

    it('[C2] refuses the API key in place of the embed token', async () => {
      expect((await confirm(baseUrl, 'sk_test', 'succeeded')).status).toBe(401);
    });

    it('answers 400 to an outcome that is not a state of the intent kind, without using the token', async () => {
      const intent = (await api('POST', '/setup_intents', {})).body;
      expect((await confirm(baseUrl, intent.embed_token, 'errored_capture')).status).toBe(400);
      expect((await confirm(baseUrl, intent.embed_token, 'succeeded')).status).toBe(200);
    });
  });

  describe('[C3] embed token lifetime', () => {
    it('[C3] accepts a confirm just before 3600 s', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 1 })).body;
      now += 3600_000 - 1;
      expect((await confirm(baseUrl, intent.embed_token, 'succeeded')).status).toBe(200);
    });

    it('[C3] refuses a confirm at 3600 s with 401', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 1 })).body;
      now += 3600_000;
      const res = await confirm(baseUrl, intent.embed_token, 'succeeded');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('embed_token_expired');
    });

    it('[C3] honours a configured embedTokenTtlSeconds', async () => {
      const short = new PaymentsSimulator({ apiKeys: ['k'], embedTokenTtlSeconds: 60, now: () => now });
      const url = await short.start();
      try {
        const intent = (await apiClient(url, 'k')('POST', '/payment_intents', { amount: 1 })).body;
        expect(intent.embed_token_expires_at).toBe(new Date(now + 60_000).toISOString());
        now += 60_000;
        expect((await confirm(url, intent.embed_token, 'succeeded')).status).toBe(401);
      } finally {
        await short.stop();
      }
    });
  });

  describe('[C1] checkout form mounted with the render token', () => {
    const checkout = (token: string) => fetch(`${baseUrl}/embed/checkout?token=${encodeURIComponent(token)}`);

    it('[C1] serves an HTML form showing the amount, with Pay / Fail / Cancel buttons', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 4200 })).body;
      const res = await checkout(intent.render_token);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain('data-amount="4200"');
      expect(html).toMatch(/id="pay"[^>]*data-outcome="succeeded"/);
      expect(html).toMatch(/id="fail"/);
      expect(html).toMatch(/id="cancel"/);
      expect(html).toContain("'payments:confirm_result'");
    });

    it('[C4] never puts the embed token into the page (the parent hands it over)', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 1 })).body;
      expect(await (await checkout(intent.render_token)).text()).not.toContain(intent.embed_token);
    });

    it('[C1] lets only the allowed origins frame the form (CSP frame-ancestors)', async () => {
      const intent = (
        await api('POST', '/payment_intents', {
          amount: 1,
          allowed_origins: ['https://shop.example', 'http://localhost:3000'],
        })
      ).body;
      const csp = (await checkout(intent.render_token)).headers.get('content-security-policy') ?? '';
      expect(csp).toContain('frame-ancestors https://shop.example http://localhost:3000');
      expect(csp).toMatch(/script-src 'nonce-[^']+'/);
    });

    it('answers 400 to an allowed origin with a path', async () => {
      expect(
        (await api('POST', '/payment_intents', { amount: 1, allowed_origins: ['https://shop.example/checkout'] }))
          .status,
      ).toBe(400);
    });

    it('[C1] refuses a forged render token with 401', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 1 })).body;
      const [body] = (intent.render_token as string).split('.');
      const claims = JSON.parse(Buffer.from(body!, 'base64url').toString());
      const forged = Buffer.from(JSON.stringify({ ...claims, origins: ['https://evil.example'] })).toString(
        'base64url',
      );
      expect((await checkout(`${forged}.${intent.render_token.split('.')[1]}`)).status).toBe(401);
    });

    it('[C1] refuses an expired render token with 401', async () => {
      const intent = (await api('POST', '/payment_intents', { amount: 1 })).body;
      now += 3600_000;
      expect((await checkout(intent.render_token)).status).toBe(401);
    });

    it('[C1] refuses a missing token with 401', async () => {
      expect((await fetch(`${baseUrl}/embed/checkout`)).status).toBe(401);
    });
  });
});
