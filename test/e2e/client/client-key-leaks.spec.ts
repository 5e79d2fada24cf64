import 'reflect-metadata';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import {
  PaymentsApiError,
  PaymentsConfigurationError,
  PaymentsError,
  PaymentsModule,
  type PaymentsModuleOptions,
  type PaymentsService,
} from '../../../lib/index.js';
import { bootClient, INTENT_ID, TEST_API_KEY } from './support/client-fixture.js';
import { captureLogs, renderings } from './support/leak-check.js';
import { refusedAddress, ScriptedServer, type ScriptedAnswer } from './support/scripted-server.js';

/** Rejects with the error the call gives (fails the test if the call succeeds). */
async function errorOf(call: Promise<unknown>): Promise<Error> {
  const outcome = await call.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(PaymentsError);
  return outcome as Error;
}

function expectNoKey(error: unknown): void {
  for (const text of renderings(error)) expect(text).not.toContain(TEST_API_KEY);
  // No low-level error rides along: an AxiosError would carry config.headers, hence the key.
  for (const field of ['config', 'request', 'response', 'cause', 'headers']) {
    expect(Object.getOwnPropertyNames(error)).not.toContain(field);
  }
}

describe('the API key never leaks, on every error path', () => {
  let server: ScriptedServer;
  let payments: PaymentsService;
  let close: () => Promise<void>;

  beforeEach(async () => {
    server = new ScriptedServer();
    ({ payments, close } = await bootClient(await server.listen(), { http: { timeoutMs: 300, maxRetries: 2 } }));
  });

  afterEach(async () => {
    await close();
    await server.close();
  });

  const statusPaths: Array<[string, ScriptedAnswer]> = [
    ['401', { status: 401, body: { error: 'unauthorized' } }],
    ['403', { status: 403, body: { error: 'forbidden' } }],
    ['404', { status: 404, body: { error: 'not found' } }],
    ['409 (other 4xx)', { status: 409, body: 'conflict' }],
    ['500', { status: 500, body: { error: 'boom' } }],
    ['429 after every retry', { status: 429, headers: { 'retry-after': '1' } }],
  ];

  it.each(statusPaths)('[A1] %s: not in String, stack, JSON or util.inspect of the error', async (_name, answer) => {
    server.answer(answer);
    const error = await errorOf(payments.paymentIntents.retrieve(INTENT_ID));
    expect(error).toBeInstanceOf(PaymentsApiError);
    expectNoKey(error);
  });

  it('connection refused: not in any rendering of the error', async () => {
    const refused = await bootClient(await refusedAddress());
    try {
      const error = await errorOf(refused.payments.paymentIntents.create({ amount: 1 }));
      expect(error).toMatchObject({ code: 'ECONNREFUSED' });
      expectNoKey(error);
    } finally {
      await refused.close();
    }
  });

  it('timeout: not in any rendering of the error', async () => {
    server.answer('hang');
    const error = await errorOf(payments.paymentIntents.create({}));
    expect(error).toMatchObject({ code: 'ETIMEDOUT' });
    expectNoKey(error);
  });

  it('connection reset: not in any rendering of the error', async () => {
    server.answer('reset');
    const error = await errorOf(payments.paymentIntents.create({}));
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expectNoKey(error);
  });

  it('bad id: not in any rendering of the error, and the id is not echoed either', async () => {
    const error = await errorOf(payments.paymentIntents.retrieve(TEST_API_KEY));
    expect(error.name).toBe('PaymentsInvalidArgumentError');
    expectNoKey(error);
    expect(server.requests).toHaveLength(0);
  });

  it('bad path: not in any rendering of the error', async () => {
    const error = await errorOf(payments.request({ method: 'GET', path: `https://evil.example/${TEST_API_KEY}` }));
    expectNoKey(error);
    expect(server.requests).toHaveLength(0);
  });

  it('a path that contains the key is redacted in the error', async () => {
    server.answer({ status: 404 });
    const error = await errorOf(payments.request({ method: 'GET', path: `/things/${TEST_API_KEY}` }));
    expect((error as PaymentsApiError).path).toBe('/things/[REDACTED]');
    expectNoKey(error);
  });

  it('an error body that echoes the key (hostile or buggy server) has it replaced by [REDACTED]', async () => {
    server.answer({
      status: 401,
      body: {
        error: `key ${TEST_API_KEY} is inactive`,
        [TEST_API_KEY]: [TEST_API_KEY, 1],
        nested: { deep: { key: TEST_API_KEY } },
      },
    });
    const error = await errorOf(payments.paymentIntents.retrieve(INTENT_ID));
    expect((error as PaymentsApiError).body).toEqual({
      error: 'key [REDACTED] is inactive',
      '[REDACTED]': ['[REDACTED]', 1],
      nested: { deep: { key: '[REDACTED]' } },
    });
    expectNoKey(error);
  });

  it('a text error body that echoes the key has it replaced by [REDACTED]', async () => {
    server.answer({ status: 500, body: `bad request with X-Api-Key: ${TEST_API_KEY}` });
    const error = await errorOf(payments.paymentIntents.create({}));
    expect((error as PaymentsApiError).body).toBe('bad request with X-Api-Key: [REDACTED]');
    expectNoKey(error);
  });

  it('no log line written during these calls contains the key (and retries were logged)', async () => {
    // After compile(): the testing module installs its own logger when it compiles.
    const logs = captureLogs();
    server.answer({ status: 429 }, { status: 503 }, { status: 200, body: { echoed: TEST_API_KEY } });
    try {
      await payments.paymentIntents.retrieve(INTENT_ID);
    } finally {
      logs.restore();
    }
    expect(logs.lines.some((line) => line.includes('answered 429'))).toBe(true);
    for (const line of logs.lines) expect(line).not.toContain(TEST_API_KEY);
  });
});

describe('PaymentsService itself does not show the key', () => {
  let server: ScriptedServer;
  let payments: PaymentsService;
  let close: () => Promise<void>;

  beforeAll(async () => {
    server = new ScriptedServer();
    ({ payments, close } = await bootClient(await server.listen()));
  });

  afterAll(async () => {
    await close();
    await server.close();
  });

  it('util.inspect of the service (deep, hidden fields, with and without custom inspect) has no key', () => {
    for (const customInspect of [true, false]) {
      expect(inspect(payments, { depth: 12, showHidden: true, customInspect })).not.toContain(TEST_API_KEY);
      expect(inspect(payments.paymentIntents, { depth: 12, showHidden: true, customInspect })).not.toContain(
        TEST_API_KEY,
      );
    }
    expect(inspect(payments)).toContain('[REDACTED]');
  });

  it('JSON.stringify and String of the service have no key', () => {
    expect(JSON.stringify(payments)).not.toContain(TEST_API_KEY);
    expect(
      JSON.stringify({
        payments,
        resources: [payments.paymentIntents, payments.setupIntents, payments.webhookEndpoints],
      }),
    ).not.toContain(TEST_API_KEY);
    expect(String(payments)).not.toContain(TEST_API_KEY);
  });

  it('no enumerable or hidden own property of the service holds the key', () => {
    const values = Object.getOwnPropertyNames(payments).map(
      (name) => (payments as unknown as Record<string, unknown>)[name],
    );
    expect(inspect(values, { depth: 12, showHidden: true, customInspect: false })).not.toContain(TEST_API_KEY);
  });
});

describe('configuration errors never echo the key', () => {
  const base: PaymentsModuleOptions = {
    apiKey: TEST_API_KEY,
    environment: 'sandbox',
    baseUrl: 'https://sandbox.example.test',
    webhooks: false,
  };
  const bad: Array<[string, Partial<Record<keyof PaymentsModuleOptions, unknown>>]> = [
    ['environment', { environment: 'prod' }],
    ['baseUrl', { baseUrl: `not a url ${TEST_API_KEY}` }],
    ['baseUrl (http)', { baseUrl: 'http://sandbox.example.test' }],
    ['http.maxRetries', { http: { maxRetries: -1 } }],
    ['webhooks.verifier', { webhooks: { secret: TEST_API_KEY } }],
    ['apiKey with a newline', { apiKey: `${TEST_API_KEY}\n` }],
  ];

  it.each(bad)('%s: the boot error has no key in any rendering', async (_name, override) => {
    const outcome = await Test.createTestingModule({
      imports: [PaymentsModule.forRoot({ ...base, ...override } as PaymentsModuleOptions)],
    })
      .compile()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(outcome).toBeInstanceOf(PaymentsConfigurationError);
    expectNoKey(outcome);
  });
});
