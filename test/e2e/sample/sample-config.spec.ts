import { describe, expect, it } from '@jest/globals';
import { readSampleConfig, SampleConfigError } from '../../../sample/sample.config.js';

const sandbox = {
  PAYMENTS_BASE_URL: 'https://sandbox.payments.example',
  PAYMENTS_API_KEY: 'sk_sandbox_config_test',
  PAYMENTS_CHECKOUT_URL: 'https://checkout.sandbox.payments.example/embed',
};

describe('sample configuration (environment variables)', () => {
  it('reads a real sandbox from PAYMENTS_* with the defaults filled in', () => {
    const config = readSampleConfig({ ...sandbox, PAYMENTS_WEBHOOK_SECRET: 'whsec_a' });
    expect(config).toMatchObject({
      port: 3000,
      publicUrl: 'http://localhost:3000',
      payments: { baseUrl: sandbox.PAYMENTS_BASE_URL, environment: 'sandbox', allowInsecureHttp: false },
      webhooks: { secrets: ['whsec_a'], scheme: { kind: 'standard-webhooks' } },
      checkout: { formUrl: sandbox.PAYMENTS_CHECKOUT_URL },
      shop: { defaultCurrency: 'EUR' },
    });
  });

  it('[W7] reads several comma-separated webhook secrets (rotation)', () => {
    expect(readSampleConfig({ ...sandbox, PAYMENTS_WEBHOOK_SECRET: 'whsec_new, whsec_old' }).webhooks.secrets).toEqual([
      'whsec_new',
      'whsec_old',
    ]);
  });

  it('[W8] describes an HMAC scheme from PAYMENTS_WEBHOOK_* variables', () => {
    const config = readSampleConfig({
      ...sandbox,
      PAYMENTS_WEBHOOK_SCHEME: 'hmac',
      PAYMENTS_WEBHOOK_SIGNATURE_HEADER: 'x-signature',
      PAYMENTS_WEBHOOK_SIGNATURE_PREFIX: 'sha256=',
      PAYMENTS_WEBHOOK_TIMESTAMP_HEADER: 'x-timestamp',
      PAYMENTS_WEBHOOK_SIGNED_PAYLOAD: 'timestamp.body',
    });
    expect(config.webhooks.scheme).toEqual({
      kind: 'hmac',
      header: 'x-signature',
      prefix: 'sha256=',
      timestampHeader: 'x-timestamp',
      signedPayload: 'timestamp.body',
    });
  });

  it.each(['PAYMENTS_BASE_URL', 'PAYMENTS_API_KEY', 'PAYMENTS_CHECKOUT_URL'])('names %s when it is missing', (name) => {
    const env: Record<string, string> = { ...sandbox };
    delete env[name];
    expect(() => readSampleConfig(env)).toThrow(SampleConfigError);
    expect(() => readSampleConfig(env)).toThrow(name);
  });

  it('never puts the API key in a configuration error', () => {
    try {
      readSampleConfig({ ...sandbox, PORT: 'not-a-port' });
      throw new Error('expected a SampleConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(SampleConfigError);
      expect(String((error as Error).message)).not.toContain(sandbox.PAYMENTS_API_KEY);
      expect((error as Error).message).toContain('PORT');
    }
  });
  it('reads the shop settings: allowed origins, form timeout, developer panel, admin token, queue', () => {
    const config = readSampleConfig({
      ...sandbox,
      SHOP_ALLOWED_ORIGINS: 'https://shop.example, http://127.0.0.1:3000',
      SHOP_FORM_LOAD_TIMEOUT_MS: '2500',
      SHOP_DEV_PANEL: 'true',
      SHOP_ADMIN_TOKEN: 'a-long-enough-admin-token',
      SAMPLE_QUEUE_REDIS_URL: 'redis://127.0.0.1:6379/2',
      SAMPLE_QUEUE_ATTEMPTS: '3',
    });
    expect(config).toMatchObject({
      checkout: { allowedOrigins: ['https://shop.example', 'http://127.0.0.1:3000'], formLoadTimeoutMs: 2500 },
      shop: { devPanel: true },
      admin: { token: 'a-long-enough-admin-token' },
      queue: { redisUrl: 'redis://127.0.0.1:6379/2', name: 'sample-shop-webhooks', attempts: 3 },
    });
  });

  it('leaves the shop extras off by default: derived origins, no developer panel, /admin disabled, inline processing', () => {
    const config = readSampleConfig(sandbox);
    expect(config.checkout).toMatchObject({ allowedOrigins: [], formLoadTimeoutMs: 6000 });
    expect(config.shop.devPanel).toBe(false);
    expect(config.admin.token).toBeUndefined();
    expect(config.queue).toBeUndefined();
  });

  it.each([
    ['SHOP_ALLOWED_ORIGINS', 'https://shop.example/checkout', 'scheme://host[:port]'],
    ['SHOP_FORM_LOAD_TIMEOUT_MS', '50', 'between 500 and 60000'],
    ['SHOP_ADMIN_TOKEN', 'short', 'at least 16 characters'],
    ['SAMPLE_QUEUE_REDIS_URL', '127.0.0.1:6379', 'redis://'],
  ])('refuses a bad %s at boot, naming the fix', (name, value, fix) => {
    expect(() => readSampleConfig({ ...sandbox, [name]: value })).toThrow(SampleConfigError);
    expect(() => readSampleConfig({ ...sandbox, [name]: value })).toThrow(fix);
  });
});
