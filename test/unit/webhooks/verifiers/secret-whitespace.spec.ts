import { describe, expect, it } from '@jest/globals';
import { hmacVerifier, PaymentsConfigurationError, standardWebhooksVerifier } from '../../../../lib/index.js';

const SECRET = `whsec_${Buffer.from('secret-whitespace-secret-32-byte').toString('base64')}`;

const errorOf = (build: () => unknown): PaymentsConfigurationError => {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    return error as PaymentsConfigurationError;
  }
  throw new Error('expected a PaymentsConfigurationError');
};

describe('a webhook secret with surrounding whitespace', () => {
  it.each([
    [
      'standardWebhooksVerifier',
      () => standardWebhooksVerifier({ secrets: `${SECRET}\n` }),
      'standardWebhooksVerifier({ secrets })',
    ],
    [
      'hmacVerifier',
      () => hmacVerifier({ secrets: 'hmac-secret-value\n', header: 'x-signature' }),
      'hmacVerifier({ secrets })',
    ],
    [
      'a rotated secret',
      () => standardWebhooksVerifier({ secrets: [SECRET, ` ${SECRET}`] }),
      'standardWebhooksVerifier({ secrets })[1]',
    ],
  ])('%s refuses it with the "trim it" hint, never echoing the secret', (_name, build, option) => {
    const error = errorOf(build);
    expect(error.option).toBe(option);
    expect(error.message).toContain('trailing newline');
    expect(error.message).toContain("config.getOrThrow<string>('PAYMENTS_WEBHOOK_SECRET').trim()");
    expect(error.message).not.toContain(SECRET);
    expect(error.message).not.toContain('hmac-secret-value');
  });

  it('accepts the trimmed secret', () => {
    expect(() => standardWebhooksVerifier({ secrets: `${SECRET}\n`.trim() })).not.toThrow();
  });
});
