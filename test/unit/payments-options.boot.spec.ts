import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  PaymentsConfigurationError,
  PaymentsModule,
  type PaymentsModuleOptions,
  type WebhookVerifier,
} from '../../lib/index.js';

const KEY = 'sk_test_OPTIONSCANARY_91b0c3d2e4f5';
const verifier: WebhookVerifier = { verify: () => ({ valid: true }) };
const valid: PaymentsModuleOptions = {
  apiKey: KEY,
  environment: 'sandbox',
  baseUrl: 'https://sandbox.example.test',
  webhooks: false,
};

type Case = [label: string, option: string, options: Record<string, unknown>];
const with_ = (patch: Record<string, unknown>): Record<string, unknown> => ({ ...valid, ...patch });
const without = (name: string): Record<string, unknown> => {
  const copy: Record<string, unknown> = { ...valid };
  delete copy[name];
  return copy;
};

/** Every bad option, the option the error must name, and the options. */
const badOptions: Case[] = [
  ['missing apiKey', 'apiKey', without('apiKey')],
  ['empty apiKey', 'apiKey', with_({ apiKey: '' })],
  ['blank apiKey', 'apiKey', with_({ apiKey: '   ' })],
  ['apiKey that is not a string', 'apiKey', with_({ apiKey: 12345 })],
  ['apiKey with a trailing newline', 'apiKey', with_({ apiKey: `${KEY}\n` })],
  ['missing environment', 'environment', without('environment')],
  ['unknown environment', 'environment', with_({ environment: 'live' })],
  ['missing baseUrl', 'baseUrl', without('baseUrl')],
  ['baseUrl that is not a URL', 'baseUrl', with_({ baseUrl: 'sandbox.example.test' })],
  ['baseUrl with another protocol', 'baseUrl', with_({ baseUrl: 'ftp://sandbox.example.test' })],
  ['plain http: baseUrl without allowInsecureHttp', 'baseUrl', with_({ baseUrl: 'http://sandbox.example.test' })],
  [
    'plain http: baseUrl with allowInsecureHttp: false',
    'baseUrl',
    with_({ baseUrl: 'http://127.0.0.1:4010', allowInsecureHttp: false }),
  ],
  ['baseUrl with credentials', 'baseUrl', with_({ baseUrl: 'https://user:pass@sandbox.example.test' })],
  ['baseUrl with a query string', 'baseUrl', with_({ baseUrl: 'https://sandbox.example.test/?key=1' })],
  ['allowInsecureHttp that is not a boolean', 'allowInsecureHttp', with_({ allowInsecureHttp: 'yes' })],
  ['empty apiVersion', 'apiVersion', with_({ apiVersion: '' })],
  ['apiVersion that is a number', 'apiVersion', with_({ apiVersion: 1 })],
  ['http that is not an object', 'http', with_({ http: 5 })],
  ['negative http.timeoutMs', 'http.timeoutMs', with_({ http: { timeoutMs: -1 } })],
  ['zero http.timeoutMs', 'http.timeoutMs', with_({ http: { timeoutMs: 0 } })],
  ['non-numeric http.timeoutMs', 'http.timeoutMs', with_({ http: { timeoutMs: '1000' } })],
  ['negative http.maxRetries', 'http.maxRetries', with_({ http: { maxRetries: -1 } })],
  ['fractional http.maxRetries', 'http.maxRetries', with_({ http: { maxRetries: 1.5 } })],
  ['NaN http.maxRetries', 'http.maxRetries', with_({ http: { maxRetries: Number.NaN } })],
  ['negative http.maxRetryDelayMs', 'http.maxRetryDelayMs', with_({ http: { maxRetryDelayMs: -10 } })],
  [
    'infinite http.baseRetryDelayMs',
    'http.baseRetryDelayMs',
    with_({ http: { baseRetryDelayMs: Number.POSITIVE_INFINITY } }),
  ],
  ['missing webhooks', 'webhooks', without('webhooks')],
  ['webhooks that is not an object', 'webhooks', with_({ webhooks: true })],
  ['webhooks without a verifier', 'webhooks.verifier', with_({ webhooks: {} })],
  [
    'webhooks with a verifier lacking verify()',
    'webhooks.verifier',
    with_({ webhooks: { verifier: { secret: 'whsec_x' } } }),
  ],
  ['empty webhooks.endpointIds', 'webhooks.endpointIds', with_({ webhooks: { verifier, endpointIds: [] } })],
  [
    'webhooks.endpointIds that are not UUIDs',
    'webhooks.endpointIds',
    with_({ webhooks: { verifier, endpointIds: ['we_1'] } }),
  ],
  ['negative webhooks.maxBodyBytes', 'webhooks.maxBodyBytes', with_({ webhooks: { verifier, maxBodyBytes: -1 } })],
  [
    'non-numeric webhooks.claimTtlSeconds',
    'webhooks.claimTtlSeconds',
    with_({ webhooks: { verifier, claimTtlSeconds: '300' } }),
  ],
  [
    'zero webhooks.retentionSeconds',
    'webhooks.retentionSeconds',
    with_({ webhooks: { verifier, retentionSeconds: 0 } }),
  ],
  ['webhooks.store without the store methods', 'webhooks.store', with_({ webhooks: { verifier, store: {} } })],
  [
    'webhooks.requireHttps that is not a boolean',
    'webhooks.requireHttps',
    with_({ webhooks: { verifier, requireHttps: 'true' } }),
  ],
  ['unknown webhooks.processing', 'webhooks.processing', with_({ webhooks: { verifier, processing: 'queued' } })],
  [
    'queue without a connection',
    'webhooks.processing.queue.connection',
    with_({ webhooks: { verifier, processing: { queue: {} } } }),
  ],
  ['runtime without sleep()', 'runtime', with_({ runtime: { now: () => 0, random: () => 0 } })],
];

async function bootError(imports: unknown[]): Promise<unknown> {
  try {
    await Test.createTestingModule({ imports: imports as never[] }).compile();
  } catch (error: unknown) {
    return error;
  }
  return undefined;
}

function expectNamedConfigurationError(error: unknown, option: string): void {
  expect(error).toBeInstanceOf(PaymentsConfigurationError);
  const e = error as PaymentsConfigurationError;
  expect(e.option).toBe(option);
  expect(e.message).toContain(`\`${option}\``);
  expect(e.message).toMatch(/Fix: \S/);
  expect(e.message).not.toContain(KEY);
  expect(e.stack ?? '').not.toContain(KEY);
  expect(JSON.stringify(e)).not.toContain(KEY);
}

describe('options validation at boot', () => {
  it.each(badOptions)(
    'forRoot: %s fails with PaymentsConfigurationError naming %s and the fix',
    async (_label, option, options) => {
      expectNamedConfigurationError(
        await bootError([PaymentsModule.forRoot(options as unknown as PaymentsModuleOptions)]),
        option,
      );
    },
  );

  it.each(badOptions)('forRootAsync (useFactory): %s fails naming %s', async (label, option, options) => {
    const error = await bootError([
      PaymentsModule.forRootAsync({
        useFactory: async () => options as unknown as PaymentsModuleOptions,
        // With receiver: false the factory may leave webhooks out (said once); with a route it must give them.
        receiver: label === 'missing webhooks' ? undefined : false,
      }),
    ]);
    expectNamedConfigurationError(error, option);
  });

  it('accepts plain http: with allowInsecureHttp: true (the local simulator)', async () => {
    await expect(
      bootError([PaymentsModule.forRoot({ ...valid, baseUrl: 'http://127.0.0.1:4010', allowInsecureHttp: true })]),
    ).resolves.toBeUndefined();
  });

  it('accepts a full set of valid options, webhooks included', async () => {
    const options: PaymentsModuleOptions = {
      ...valid,
      apiVersion: '1',
      http: { timeoutMs: 5000, maxRetries: 0, maxRetryDelayMs: 0, baseRetryDelayMs: 0 },
      webhooks: {
        verifier,
        path: 'hooks/payments',
        endpointIds: ['3f1c2a9e-8b7d-4c6e-9a5f-1b2c3d4e5f60'],
        maxBodyBytes: 1024,
        requireHttps: false,
      },
    };
    await expect(bootError([PaymentsModule.forRoot(options)])).resolves.toBeUndefined();
  });
});

describe('forRootAsync variants', () => {
  @Injectable()
  class PaymentsOptionsFactory {
    createPaymentsOptions(): PaymentsModuleOptions {
      return { ...valid, environment: 'nope' as 'sandbox' };
    }
  }

  @Module({ providers: [PaymentsOptionsFactory], exports: [PaymentsOptionsFactory] })
  class OptionsModule {}

  it('useClass: the factory class is instantiated and a bad option fails at boot', async () => {
    const error = await bootError([PaymentsModule.forRootAsync({ useClass: PaymentsOptionsFactory, receiver: false })]);
    expectNamedConfigurationError(error, 'environment');
  });

  it('useExisting: an exported provider of an imported module is used and a bad option fails at boot', async () => {
    const error = await bootError([
      PaymentsModule.forRootAsync({
        imports: [OptionsModule],
        useExisting: PaymentsOptionsFactory,
        receiver: false,
      }),
    ]);
    expectNamedConfigurationError(error, 'environment');
  });
});
