import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  PaymentsApiError,
  PaymentsAuthenticationError,
  PaymentsConnectionError,
  PaymentsPermissionError,
  PaymentsRateLimitError,
  type PaymentsModuleOptions,
  type PaymentsService,
} from '../../../lib/index.js';
import { bootClient, INTENT_ID } from './support/client-fixture.js';
import type { FakeRuntime } from './support/fake-runtime.js';
import { refusedAddress, ScriptedServer } from './support/scripted-server.js';

const ok = { status: 200, body: { id: INTENT_ID, state: 'succeeded' } };
const tooMany = { status: 429, body: { error: 'slow down' } };

describe('PaymentsService retries and backoff (real HTTP server, fake runtime)', () => {
  let server: ScriptedServer;
  let baseUrl: string;
  let client: { payments: PaymentsService; runtime: FakeRuntime; close: () => Promise<void> } | undefined;

  const boot = async (overrides: Partial<PaymentsModuleOptions> = {}, url = baseUrl) => {
    client = await bootClient(url, overrides);
    return client;
  };

  beforeEach(async () => {
    server = new ScriptedServer();
    baseUrl = await server.listen();
  });

  afterEach(async () => {
    await client?.close();
    client = undefined;
    await server.close();
  });

  it('[L1] 429, 429, 200 ends in success after 3 requests, waiting random() * base * 2^n each time', async () => {
    const { payments, runtime } = await boot();
    server.answer(tooMany, tooMany, ok);
    await expect(payments.paymentIntents.retrieve(INTENT_ID)).resolves.toEqual(ok.body);
    expect(server.requests).toHaveLength(3);
    // random() = 0.5, baseRetryDelayMs = 500: 0.5 * 500, then 0.5 * 1000
    expect(runtime.sleeps).toEqual([250, 500]);
  });

  it('[L1] a POST answered 429 is retried too (the service did not process it)', async () => {
    const { payments, runtime } = await boot();
    server.answer(tooMany, { status: 201, body: { id: INTENT_ID } });
    await expect(payments.paymentIntents.create({ amount: 1 })).resolves.toEqual({ id: INTENT_ID });
    expect(server.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
    expect(runtime.sleeps).toEqual([250]);
  });

  it('[L1] waits exactly Retry-After when it is given in seconds', async () => {
    const { payments, runtime } = await boot();
    server.answer({ ...tooMany, headers: { 'retry-after': '2' } }, ok);
    await payments.paymentIntents.retrieve(INTENT_ID);
    expect(runtime.sleeps).toEqual([2000]);
  });

  it('[L1] waits until the Retry-After HTTP date, measured on the runtime clock', async () => {
    const { payments, runtime } = await boot();
    const at = new Date(runtime.now() + 7000).toUTCString();
    server.answer({ ...tooMany, headers: { 'retry-after': at } }, ok);
    await payments.paymentIntents.retrieve(INTENT_ID);
    expect(runtime.sleeps).toEqual([7000]);
  });

  it('[L1] caps Retry-After at http.maxRetryDelayMs', async () => {
    const { payments, runtime } = await boot({ http: { maxRetryDelayMs: 5000 } });
    server.answer({ ...tooMany, headers: { 'retry-after': '120' } }, ok);
    await payments.paymentIntents.retrieve(INTENT_ID);
    expect(runtime.sleeps).toEqual([5000]);
  });

  it('[L1] caps the exponential step at http.maxRetryDelayMs before the jitter', async () => {
    const { payments, runtime } = await boot({ http: { baseRetryDelayMs: 500, maxRetryDelayMs: 600, maxRetries: 3 } });
    server.answer(tooMany);
    await expect(payments.paymentIntents.retrieve(INTENT_ID)).rejects.toBeInstanceOf(PaymentsRateLimitError);
    expect(runtime.sleeps).toEqual([250, 300, 300]);
  });

  it('persistent 429 ends in PaymentsRateLimitError after maxRetries + 1 requests', async () => {
    const { payments, runtime } = await boot({ http: { maxRetries: 2 } });
    server.answer({ ...tooMany, headers: { 'retry-after': '1' } });
    const error = await payments.paymentIntents.retrieve(INTENT_ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsRateLimitError);
    expect(server.requests).toHaveLength(3);
    expect(runtime.sleeps).toEqual([1000, 1000]);
    expect(error).toMatchObject({
      status: 429,
      attempts: 3,
      retryAfterMs: 1000,
      method: 'GET',
      path: `/payment_intents/${INTENT_ID}`,
    });
  });

  it('maxRetries: 0 sends a 429 request once', async () => {
    const { payments } = await boot({ http: { maxRetries: 0 } });
    server.answer(tooMany);
    await expect(payments.paymentIntents.retrieve(INTENT_ID)).rejects.toBeInstanceOf(PaymentsRateLimitError);
    expect(server.requests).toHaveLength(1);
  });

  it('a POST answered 500 is sent once', async () => {
    const { payments } = await boot();
    server.answer({ status: 500, body: { error: 'boom' } });
    const error = await payments.paymentIntents.create({ amount: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsApiError);
    expect(error).toMatchObject({
      status: 500,
      method: 'POST',
      path: '/payment_intents',
      body: { error: 'boom' },
      attempts: 1,
    });
    expect(server.requests).toHaveLength(1);
  });

  it('a POST answered 503 is sent once', async () => {
    const { payments } = await boot();
    server.answer({ status: 503 }, { status: 201, body: {} });
    await expect(payments.setupIntents.create({})).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
  });

  it('a POST whose connection drops after sending is not replayed', async () => {
    const { payments } = await boot();
    server.answer('reset', { status: 201, body: {} });
    const error = await payments.webhookEndpoints.create({ url: 'https://x.example' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsConnectionError);
    expect(error).toMatchObject({ method: 'POST', path: '/webhook_endpoints', attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('a GET answered 503 then 200 succeeds after one backoff', async () => {
    const { payments, runtime } = await boot();
    server.answer({ status: 503 }, ok);
    await expect(payments.paymentIntents.retrieve(INTENT_ID)).resolves.toEqual(ok.body);
    expect(server.requests).toHaveLength(2);
    expect(runtime.sleeps).toEqual([250]);
  });

  it('a GET is retried on 502 and 504 too, and gives up with the last status after maxRetries', async () => {
    const { payments } = await boot({ http: { maxRetries: 2 } });
    server.answer({ status: 502 }, { status: 504 });
    await expect(payments.setupIntents.retrieve(INTENT_ID)).rejects.toMatchObject({ status: 504, attempts: 3 });
    expect(server.requests).toHaveLength(3);
  });

  it('a GET whose connection drops is retried', async () => {
    const { payments } = await boot();
    server.answer('reset', ok);
    await expect(payments.paymentIntents.retrieve(INTENT_ID)).resolves.toEqual(ok.body);
    expect(server.requests).toHaveLength(2);
  });

  it('a GET answered 500 or 404 is not retried', async () => {
    const { payments } = await boot();
    server.answer({ status: 500 }, { status: 404, body: { error: 'no such intent' } });
    await expect(payments.paymentIntents.retrieve(INTENT_ID)).rejects.toMatchObject({ status: 500 });
    await expect(payments.paymentIntents.retrieve(INTENT_ID)).rejects.toMatchObject({
      status: 404,
      body: { error: 'no such intent' },
    });
    expect(server.requests).toHaveLength(2);
  });

  it('[A7] a 401 is sent once and gives PaymentsAuthenticationError hinting at sandbox vs production keys', async () => {
    const { payments, runtime } = await boot();
    server.answer({ status: 401, body: { error: 'inactive key' } });
    const error = await payments.paymentIntents.retrieve(INTENT_ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsAuthenticationError);
    expect((error as Error).message).toMatch(/sandbox keys only work against the sandbox base address/);
    expect(error).toMatchObject({ status: 401, body: { error: 'inactive key' } });
    expect(server.requests).toHaveLength(1);
    expect(runtime.sleeps).toEqual([]);
  });

  it('[A8] a 403 is sent once and gives PaymentsPermissionError', async () => {
    const { payments, runtime } = await boot();
    server.answer({ status: 403 });
    const error = await payments.paymentIntents.create({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsPermissionError);
    expect(error).toMatchObject({ status: 403, method: 'POST', path: '/payment_intents' });
    expect(server.requests).toHaveLength(1);
    expect(runtime.sleeps).toEqual([]);
  });

  it('a redirect is not followed (the key must not travel to another host)', async () => {
    const other = new ScriptedServer();
    const otherUrl = await other.listen();
    try {
      const { payments } = await boot();
      server.answer({ status: 302, headers: { location: `${otherUrl}/payment_intents/${INTENT_ID}` } });
      await expect(payments.paymentIntents.retrieve(INTENT_ID)).rejects.toMatchObject({ status: 302 });
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('a refused connection gives PaymentsConnectionError ECONNREFUSED after maxRetries + 1 tries of a GET', async () => {
    const { payments, runtime } = await boot({}, await refusedAddress());
    const error = await payments.paymentIntents.retrieve(INTENT_ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsConnectionError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED', method: 'GET', attempts: 4 });
    expect(runtime.sleeps).toEqual([250, 500, 1000]);
  });

  it('a refused connection is retried for a POST too: it provably never reached the service', async () => {
    const { payments, runtime } = await boot({ http: { maxRetries: 2 } }, await refusedAddress());
    const error = await payments.paymentIntents.create({ amount: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsConnectionError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED', method: 'POST', attempts: 3 });
    expect(runtime.sleeps).toHaveLength(2);
  });

  it('a per-attempt timeout gives PaymentsConnectionError ETIMEDOUT after the GET retries', async () => {
    const { payments } = await boot({ http: { timeoutMs: 1000, maxRetries: 1 } });
    server.answer('hang');
    const error = await payments.paymentIntents.retrieve(INTENT_ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentsConnectionError);
    expect(error).toMatchObject({ code: 'ETIMEDOUT', attempts: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it('a POST that times out is not replayed', async () => {
    const { payments } = await boot({ http: { timeoutMs: 1000, maxRetries: 3 } });
    server.answer('hang');
    await expect(payments.paymentIntents.create({})).rejects.toMatchObject({
      name: 'PaymentsConnectionError',
      code: 'ETIMEDOUT',
      attempts: 1,
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe('keep-alive', () => {
  it('sequential calls reuse one TCP connection', async () => {
    const server = new ScriptedServer().answer(ok);
    const { payments, close } = await bootClient(await server.listen());
    try {
      await payments.paymentIntents.retrieve(INTENT_ID);
      await payments.paymentIntents.create({ amount: 1 });
      await payments.setupIntents.retrieve(INTENT_ID);
      await payments.request({ method: 'GET', path: '/webhook_requests' });
      expect(server.requests).toHaveLength(4);
      expect(server.connections).toBe(1);
    } finally {
      await close();
      await server.close();
    }
  });
});
