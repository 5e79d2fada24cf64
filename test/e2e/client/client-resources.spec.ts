import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PaymentsInvalidArgumentError, type PaymentsService } from '../../../lib/index.js';
import { bootClient, INTENT_ID } from './support/client-fixture.js';
import { ScriptedServer } from './support/scripted-server.js';

const intent = {
  id: INTENT_ID,
  state: 'requires_payment_method',
  amount: 1999,
  capture_method: 'automatic_async',
  embed_token: 'emb_1',
};

describe('PaymentsService resources (real HTTP server on loopback)', () => {
  let server: ScriptedServer;
  let payments: PaymentsService;
  let close: () => Promise<void>;
  let baseUrl: string;

  beforeEach(async () => {
    server = new ScriptedServer();
    baseUrl = await server.listen();
    ({ payments, close } = await bootClient(baseUrl));
  });

  afterEach(async () => {
    await close();
    await server.close();
  });

  it('[E1] paymentIntents.create POSTs JSON to /payment_intents and returns the intent with its embed token', async () => {
    server.answer({ status: 201, body: intent });
    const created = await payments.paymentIntents.create({ amount: 1999, capture_method: 'automatic_async' });
    expect(created).toEqual(intent);
    const [request] = server.requests;
    expect(request!.method).toBe('POST');
    expect(request!.url).toBe('/payment_intents');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request!.body)).toEqual({ amount: 1999, capture_method: 'automatic_async' });
  });

  it('[E2] paymentIntents.retrieve GETs /payment_intents/{id} and returns the intent', async () => {
    server.answer({ status: 200, body: { ...intent, state: 'succeeded' } });
    const fetched = await payments.paymentIntents.retrieve(INTENT_ID);
    expect(fetched.state).toBe('succeeded');
    expect(server.requests[0]!.method).toBe('GET');
    expect(server.requests[0]!.url).toBe(`/payment_intents/${INTENT_ID}`);
    expect(server.requests[0]!.body).toBe('');
  });

  it('[E2] paymentIntents.retrieve with an id that is not a UUID rejects and sends nothing', async () => {
    for (const bad of ['42', '../setup_intents', `${INTENT_ID}/../x`, `${INTENT_ID}?a=1`, '', 'https://evil.example']) {
      await expect(payments.paymentIntents.retrieve(bad)).rejects.toBeInstanceOf(PaymentsInvalidArgumentError);
    }
    await expect(payments.paymentIntents.retrieve(undefined as unknown as string)).rejects.toBeInstanceOf(
      PaymentsInvalidArgumentError,
    );
    expect(server.requests).toHaveLength(0);
    expect(server.connections).toBe(0);
  });

  it('[E3] setupIntents.create POSTs JSON to /setup_intents and returns the intent', async () => {
    const setup = { id: INTENT_ID, state: 'requires_payment_method', embed_token: 'emb_2' };
    server.answer({ status: 201, body: setup });
    await expect(payments.setupIntents.create({ usage: 'off_session' })).resolves.toEqual(setup);
    expect(server.requests[0]!.method).toBe('POST');
    expect(server.requests[0]!.url).toBe('/setup_intents');
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ usage: 'off_session' });
  });

  it('[E4] setupIntents.retrieve GETs /setup_intents/{id}', async () => {
    server.answer({ status: 200, body: { id: INTENT_ID, state: 'succeeded' } });
    await expect(payments.setupIntents.retrieve(INTENT_ID)).resolves.toEqual({ id: INTENT_ID, state: 'succeeded' });
    expect(server.requests[0]!.url).toBe(`/setup_intents/${INTENT_ID}`);
  });

  it('[E4] setupIntents.retrieve with an id that is not a UUID rejects and sends nothing', async () => {
    await expect(payments.setupIntents.retrieve('not-a-uuid')).rejects.toThrow(/`id` must be a UUID/);
    expect(server.requests).toHaveLength(0);
  });

  it('[E5] webhookEndpoints.create POSTs JSON to /webhook_endpoints and returns the endpoint with its secret', async () => {
    const endpoint = { id: INTENT_ID, url: 'https://shop.example/payments/webhooks', secret: 'whsec_abc' };
    server.answer({ status: 201, body: endpoint });
    await expect(payments.webhookEndpoints.create({ url: endpoint.url })).resolves.toEqual(endpoint);
    expect(server.requests[0]!.method).toBe('POST');
    expect(server.requests[0]!.url).toBe('/webhook_endpoints');
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ url: endpoint.url });
  });

  it('[R4] request() lists webhook requests with a query and returns the parsed body', async () => {
    server.answer({ status: 200, body: { data: [{ id: INTENT_ID }] } });
    const list = await payments.request<{ data: Array<{ id: string }> }>({
      method: 'GET',
      path: '/webhook_requests',
      query: { limit: 2, state: ['failed', 'pending'], webhook_id: INTENT_ID, skipped: undefined },
    });
    expect(list.data[0]!.id).toBe(INTENT_ID);
    expect(server.requests[0]!.url).toBe(
      `/webhook_requests?limit=2&state=failed&state=pending&webhook_id=${INTENT_ID}`,
    );
  });

  it('[R4] request() lists the attempts of a webhook request', async () => {
    server.answer({ status: 200, body: [] });
    await payments.request({ method: 'GET', path: `/webhook_requests/${INTENT_ID}/attempts` });
    expect(server.requests[0]!.url).toBe(`/webhook_requests/${INTENT_ID}/attempts`);
  });

  it('[R4] request() resends a webhook request with a POST and a JSON body', async () => {
    server.answer({ status: 202, body: { resent: true } });
    await expect(
      payments.request({ method: 'POST', path: `/webhook_requests/${INTENT_ID}/resend`, body: { reason: 'test' } }),
    ).resolves.toEqual({ resent: true });
    expect(server.requests[0]!.method).toBe('POST');
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ reason: 'test' });
  });

  it('request() returns a text body as a string and an empty body as undefined', async () => {
    server.answer({ status: 200, body: 'plain answer' }, { status: 204 });
    await expect(payments.request({ method: 'GET', path: '/a' })).resolves.toBe('plain answer');
    await expect(payments.request({ method: 'GET', path: '/b' })).resolves.toBeUndefined();
  });

  it('request() refuses paths that could leave the base address, and sends nothing', async () => {
    const bad = [
      'https://evil.example/x',
      '//evil.example/x',
      'webhook_requests',
      '/a/../b',
      '/a/%2e%2e/b',
      '/a/%2F/b',
      '/a?x=1',
      '/a#x',
      '/a\\b',
      '/a b',
      '/a\n',
      '/..',
      '/%zz',
    ];
    for (const path of bad) {
      await expect(payments.request({ method: 'GET', path })).rejects.toBeInstanceOf(PaymentsInvalidArgumentError);
    }
    expect(server.requests).toHaveLength(0);
    expect(server.connections).toBe(0);
  });

  it('request() refuses an unknown method and a query of the wrong type, and sends nothing', async () => {
    await expect(payments.request({ method: 'TRACE' as 'GET', path: '/a' })).rejects.toThrow(/`method`/);
    await expect(
      payments.request({ method: 'GET', path: '/a', query: { a: { b: 1 } as unknown as string } }),
    ).rejects.toThrow(/`query.a`/);
    expect(server.requests).toHaveLength(0);
  });

  it('keeps the path prefix of a baseUrl that has one', async () => {
    const prefixed = await bootClient(`${baseUrl}/v1/`);
    try {
      await prefixed.payments.paymentIntents.retrieve(INTENT_ID);
      expect(server.requests[0]!.url).toBe(`/v1/payment_intents/${INTENT_ID}`);
    } finally {
      await prefixed.close();
    }
  });
});

describe('request() bodies', () => {
  it('refuses a body that cannot be sent as JSON, and sends nothing', async () => {
    const server = new ScriptedServer();
    const { payments, close } = await bootClient(await server.listen());
    try {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await expect(payments.request({ method: 'POST', path: '/a', body: cyclic })).rejects.toThrow(
        /`body` must be JSON-serialisable/,
      );
      await expect(
        payments.paymentIntents.create({ amount: 10n } as unknown as Record<string, unknown>),
      ).rejects.toBeInstanceOf(PaymentsInvalidArgumentError);
      await expect(payments.request({ method: 'POST', path: '/a', body: () => 1 })).rejects.toBeInstanceOf(
        PaymentsInvalidArgumentError,
      );
      expect(server.requests).toHaveLength(0);
    } finally {
      await close();
      await server.close();
    }
  });
});
