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
    expect(readSampleConfig({ ...sandbox, PAYMENTS_WEBHOOK_SECRET: 'whsec_new, whsec_old' }).webhooks.secrets).toEqual(['whsec_new', 'whsec_old']);
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
});
