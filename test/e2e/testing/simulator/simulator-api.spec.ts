import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PaymentsSimulator } from '../../../../lib/testing/index.js';
import { apiClient } from './webhook-receiver.fixture.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOW = Date.UTC(2026, 0, 1);

describe('PaymentsSimulator server API', () => {
  let sim: PaymentsSimulator;
  let baseUrl: string;
  let api: ReturnType<typeof apiClient>;

  beforeEach(async () => {
    sim = new PaymentsSimulator({
      apiKeys: ['sk_alpha', { key: 'sk_beta', account: 'acct_beta' }, { key: 'sk_beta_rotated', account: 'acct_beta' }],
      now: () => NOW,
    });
    baseUrl = await sim.start();
    api = apiClient(baseUrl, 'sk_alpha');
  });
  afterEach(() => sim.stop());

  describe('intents and endpoints', () => {
    it('[E1] POST /payment_intents returns the intent with an embed token, its expiry and a render token', async () => {
      const res = await api('POST', '/payment_intents', { amount: 1999 });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(UUID),
        state: 'requires_payment_method',
        amount: 1999,
        capture_method: 'automatic_async',
      });
      expect(res.body.embed_token).toEqual(expect.any(String));
      expect(res.body.embed_token_expires_at).toBe(new Date(NOW + 3600_000).toISOString());
      expect(res.body.render_token).toEqual(expect.any(String));
    });

    it('[R1] keeps the capture_method given and never returns last_payment_error', async () => {
      const res = await api('POST', '/payment_intents', { amount: 5, capture_method: 'manual' });
      expect(res.body.capture_method).toBe('manual');
      expect(res.body).not.toHaveProperty('last_payment_error');
    });

    it('[E2] GET /payment_intents/{id} returns the intent without its tokens', async () => {
      const created = await api('POST', '/payment_intents', { amount: 10, metadata: { order: 'o-1' } });
      const res = await api('GET', `/payment_intents/${created.body.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: created.body.id,
        state: 'requires_payment_method',
        amount: 10,
        capture_method: 'automatic_async',
        metadata: { order: 'o-1' },
        created_at: new Date(NOW).toISOString(),
      });
    });

    it('[E3][E4] creates and retrieves a setup intent', async () => {
      const created = await api('POST', '/setup_intents', {});
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        id: expect.stringMatching(UUID),
        state: 'requires_payment_method',
        embed_token: expect.any(String),
        render_token: expect.any(String),
      });
      const res = await api('GET', `/setup_intents/${created.body.id}`);
      expect(res.body).toMatchObject({ id: created.body.id, state: 'requires_payment_method' });
    });

    it('answers 404 for an unknown id, a non-UUID id, and an intent of the other kind', async () => {
      const payment = await api('POST', '/payment_intents', { amount: 1 });
      expect((await api('GET', '/payment_intents/00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await api('GET', '/payment_intents/not-a-uuid')).status).toBe(404);
      expect((await api('GET', `/setup_intents/${payment.body.id}`)).status).toBe(404);
    });

    it('answers 400 to an invalid amount or invalid JSON', async () => {
      expect((await api('POST', '/payment_intents', { amount: 1.5 })).status).toBe(400);
      const res = await fetch(`${baseUrl}/payment_intents`, {
        method: 'POST',
        headers: { 'x-api-key': 'sk_alpha', 'x-api-version': '1' },
        body: '{nope',
      });
      expect(res.status).toBe(400);
    });

    it('[E5] POST /webhook_endpoints returns the endpoint with a whsec_ secret', async () => {
      const res = await api('POST', '/webhook_endpoints', {
        url: 'https://merchant.example/webhooks',
        events: ['payment_intent.succeeded'],
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(UUID),
        url: 'https://merchant.example/webhooks',
        events: ['payment_intent.succeeded'],
      });
      expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    });

    it('gives hex secrets when the simulator signs with an HMAC scheme', async () => {
      const hmacSim = new PaymentsSimulator({ apiKeys: ['k'], signature: { scheme: 'hmac', header: 'x-signature' } });
      const url = await hmacSim.start();
      try {
        const res = await apiClient(url, 'k')('POST', '/webhook_endpoints', {
          url: 'https://merchant.example/webhooks',
        });
        expect(res.body.secret).toMatch(/^[0-9a-f]{64}$/);
      } finally {
        await hmacSim.stop();
      }
    });

    it('answers 400 to an endpoint without a valid URL', async () => {
      expect((await api('POST', '/webhook_endpoints', { url: 'ftp://x' })).status).toBe(400);
      expect((await api('POST', '/webhook_endpoints', {})).status).toBe(400);
    });
  });

  describe('authentication', () => {
    it('[A7] answers 401 when X-Api-Key is missing', async () => {
      const res = await apiClient(baseUrl, undefined)('POST', '/payment_intents', { amount: 1 });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    });

    it('[A7] answers 401 to an unknown key', async () => {
      expect((await apiClient(baseUrl, 'sk_unknown')('POST', '/payment_intents', { amount: 1 })).status).toBe(401);
    });

    it('[A7] answers 401 to a revoked (inactive) key', async () => {
      sim.revokeApiKey('sk_alpha');
      expect((await api('POST', '/payment_intents', { amount: 1 })).status).toBe(401);
    });

    it('[A8] answers 403 when the key may not reach the resource (another account)', async () => {
      const created = await api('POST', '/payment_intents', { amount: 1 });
      const res = await apiClient(baseUrl, 'sk_beta')('GET', `/payment_intents/${created.body.id}`);
      expect(res.status).toBe(403);
    });

    it('[A5] a rotated key of the same account reaches the resources of the old one', async () => {
      const beta = apiClient(baseUrl, 'sk_beta');
      const created = await beta('POST', '/setup_intents', {});
      sim.revokeApiKey('sk_beta');
      expect((await beta('GET', `/setup_intents/${created.body.id}`)).status).toBe(401);
      expect((await apiClient(baseUrl, 'sk_beta_rotated')('GET', `/setup_intents/${created.body.id}`)).status).toBe(
        200,
      );
    });

    it('[A6] refuses a request carrying X-Account-Id with 400', async () => {
      const res = await apiClient(baseUrl, 'sk_alpha', { 'x-account-id': 'acct_1' })('POST', '/payment_intents', {
        amount: 1,
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('account_header_not_allowed');
    });

    it('[A2] refuses a request without X-Api-Version with 400', async () => {
      const res = await fetch(`${baseUrl}/payment_intents`, {
        method: 'POST',
        headers: { 'x-api-key': 'sk_alpha' },
        body: '{}',
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('missing_api_version');
    });

    it('[V1] refuses a version other than 1 with 400', async () => {
      const res = await apiClient(baseUrl, 'sk_alpha', { 'x-api-version': '2' })('POST', '/payment_intents', {
        amount: 1,
      });
      expect(res.status).toBe(400);
    });

    it("scopes the webhook requests list to the key's account", async () => {
      expect((await apiClient(baseUrl, 'sk_beta')('GET', '/webhook_requests')).body).toEqual({ data: [] });
    });
  });

  describe('rate-limit control', () => {
    it('[L1] answers the next N API requests with 429 and Retry-After, then serves again', async () => {
      sim.controls.rateLimit({ next: 2, retryAfterSeconds: 3 });
      const first = await api('POST', '/payment_intents', { amount: 1 });
      const second = await api('POST', '/payment_intents', { amount: 1 });
      const third = await api('POST', '/payment_intents', { amount: 1 });
      expect([first.status, second.status, third.status]).toEqual([429, 429, 201]);
      expect(first.headers.get('retry-after')).toBe('3');
      expect(sim.requestCounts().rateLimited).toBe(2);
    });

    it('throttles exactly half of the answers with ratio 0.5', async () => {
      sim.controls.rateLimit({ ratio: 0.5, retryAfterSeconds: 0 });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await api('POST', '/setup_intents', {})).status);
      expect(statuses.filter((s) => s === 429)).toHaveLength(10);
      expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    });

    it('stops throttling with rateLimit(false)', async () => {
      sim.controls.rateLimit({ ratio: 1 });
      expect((await api('POST', '/setup_intents', {})).status).toBe(429);
      sim.controls.rateLimit(false);
      expect((await api('POST', '/setup_intents', {})).status).toBe(201);
    });
  });

  it('counts the requests it received, by route', async () => {
    const created = await api('POST', '/payment_intents', { amount: 1 });
    await api('GET', `/payment_intents/${created.body.id}`);
    await api('GET', `/payment_intents/${created.body.id}`);
    expect(sim.requestCounts()).toEqual({
      api: 3,
      rateLimited: 0,
      byRoute: { 'POST /payment_intents': 1, 'GET /payment_intents/:id': 2 },
    });
  });

  it('stop() closes keep-alive connections so the port is free', async () => {
    await api('GET', '/webhook_requests');
    await sim.stop();
    await expect(fetch(`${baseUrl}/webhook_requests`)).rejects.toThrow();
  });
});
