import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { PaymentsService } from '../../../lib/index.js';
import { bootClient, INTENT_ID, TEST_API_KEY } from './support/client-fixture.js';
import { ScriptedServer } from './support/scripted-server.js';

describe('PaymentsService headers (real HTTP server on loopback)', () => {
  let server: ScriptedServer;
  let payments: PaymentsService;
  let close: () => Promise<void>;

  beforeEach(async () => {
    server = new ScriptedServer();
    ({ payments, close } = await bootClient(await server.listen()));
  });

  afterEach(async () => {
    await close();
    await server.close();
  });

  const everyCall = async (): Promise<void> => {
    await payments.paymentIntents.create({ amount: 100 });
    await payments.paymentIntents.retrieve(INTENT_ID);
    await payments.setupIntents.create({});
    await payments.setupIntents.retrieve(INTENT_ID);
    await payments.webhookEndpoints.create({ url: 'https://shop.example/hooks' });
    await payments.request({ method: 'GET', path: '/webhook_requests' });
  };

  it('[A1] sends X-Api-Key with the configured key on every call', async () => {
    await everyCall();
    expect(server.requests).toHaveLength(6);
    for (const request of server.requests) expect(request.headers['x-api-key']).toBe(TEST_API_KEY);
  });

  it('[A2] sends X-Api-Version: 1 on every call by default', async () => {
    await everyCall();
    expect(server.requests).toHaveLength(6);
    for (const request of server.requests) expect(request.headers['x-api-version']).toBe('1');
  });

  it('[A6] never sends X-Account-Id, even when a caller passes it to request() in any case', async () => {
    await everyCall();
    await payments.request({
      method: 'POST',
      path: '/webhook_requests/resend',
      headers: { 'X-Account-Id': 'acct_1', 'x-account-id': 'acct_2', 'X-ACCOUNT-ID': 'acct_3' },
    });
    expect(server.requests).toHaveLength(7);
    for (const request of server.requests) {
      expect(request.headers['x-account-id']).toBeUndefined();
      expect(request.rawHeaderNames.map((name) => name.toLowerCase())).not.toContain('x-account-id');
    }
  });

  it('[A1] a caller cannot override X-Api-Key or X-Api-Version through request() headers', async () => {
    await payments.request({
      method: 'GET',
      path: '/webhook_requests',
      headers: { 'x-api-key': 'other', 'X-Api-Version': '9' },
    });
    expect(server.requests[0]!.headers['x-api-key']).toBe(TEST_API_KEY);
    expect(server.requests[0]!.headers['x-api-version']).toBe('1');
  });

  it('request() passes other caller headers through', async () => {
    await payments.request({ method: 'GET', path: '/webhook_requests', headers: { 'X-Request-Tag': 'audit-7' } });
    expect(server.requests[0]!.headers['x-request-tag']).toBe('audit-7');
  });
});

describe('[V1] X-Api-Version is configurable', () => {
  it('[V1] sends the configured apiVersion', async () => {
    const server = new ScriptedServer();
    const { payments, close } = await bootClient(await server.listen(), { apiVersion: '2' });
    try {
      await payments.paymentIntents.retrieve(INTENT_ID);
      expect(server.requests[0]!.headers['x-api-version']).toBe('2');
    } finally {
      await close();
      await server.close();
    }
  });
});
