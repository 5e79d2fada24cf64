import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import {
  hmacScheme,
  hmacVerifier,
  PaymentsConfigurationError,
  standardWebhooks,
  standardWebhooksVerifier,
} from '../../../../lib/index.js';
import { createPaymentEvent, signWebhook } from '../../../../lib/testing/index.js';

/*
 * A scheme is one object in one file (issue 30, item 3): `standardWebhooks(...)` signs and verifies as
 * the public `standardwebhooks` library does, and the former names are aliases of the schemes.
 */
const SECRET = `whsec_${Buffer.from('standard-webhooks-scheme-spec-key').toString('base64')}`;
const rawBody = JSON.stringify(createPaymentEvent('payment_intent.succeeded'));
const input = (body: string, headers: Record<string, string>) => ({ rawBody: Buffer.from(body), headers });

describe('standardWebhooks, cross-checked with the standardwebhooks library', () => {
  it('the library verifies what the scheme signs', () => {
    // The library reads the system clock, so the scheme signs with it too.
    const headers = standardWebhooks({ secrets: SECRET }).sign(rawBody, { msgId: 'msg_lib_1' });
    expect(new Webhook(SECRET).verify(rawBody, headers)).toEqual(JSON.parse(rawBody));
  });

  it("the scheme verifies what the library's signer signs, and refuses it on another body", () => {
    const at = new Date('2026-11-24T12:00:00Z');
    const headers = {
      'webhook-id': 'msg_lib_2',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(SECRET).sign('msg_lib_2', at, rawBody),
    };
    const scheme = standardWebhooks({ secrets: SECRET, now: () => at.getTime() });
    expect(scheme.verify(input(rawBody, headers))).toEqual({ valid: true });
    expect(scheme.verify(input(`${rawBody}\n`, headers))).toEqual({ valid: false, reason: 'signature_mismatch' });
  });

  it('signWebhook(payload, scheme) is what the library signs for the same id and time', () => {
    const at = new Date('2026-11-24T12:00:00Z');
    const signed = signWebhook(rawBody, standardWebhooks({ secrets: SECRET }), {
      msgId: 'msg_lib_3',
      timestamp: at.getTime() / 1000,
    });
    expect(signed.headers['webhook-signature']).toBe(new Webhook(SECRET).sign('msg_lib_3', at, rawBody));
  });
});

describe('the former names are deprecated aliases of the schemes', () => {
  const at = Date.parse('2026-11-24T12:00:00Z');
  const now = () => at;
  const hmac = { secrets: 'alias-hmac-secret', header: 'x-signature', timestampHeader: 'x-timestamp', now } as const;

  it('standardWebhooksVerifier(options) verifies exactly as standardWebhooks(options), and can sign', () => {
    const scheme = standardWebhooks({ secrets: SECRET, now });
    const alias = standardWebhooksVerifier({ secrets: SECRET, now });
    const headers = scheme.sign(rawBody, { msgId: 'msg_alias' });
    for (const body of [rawBody, `${rawBody} `]) {
      expect(alias.verify(input(body, headers))).toEqual(scheme.verify(input(body, headers)));
    }
    expect((alias as typeof scheme).sign(rawBody, { msgId: 'msg_alias' })).toEqual(headers);
  });

  it('hmacVerifier(options) verifies exactly as hmacScheme(options)', () => {
    const headers = hmacScheme(hmac).sign(rawBody);
    expect(hmacVerifier(hmac).verify(input(rawBody, headers))).toEqual({ valid: true });
    expect(hmacVerifier(hmac).verify(input(`${rawBody} `, headers))).toEqual(
      hmacScheme(hmac).verify(input(`${rawBody} `, headers)),
    );
  });

  it('each name is the one its boot errors give', () => {
    const optionOf = (make: () => unknown): string => {
      try {
        make();
      } catch (error) {
        expect(error).toBeInstanceOf(PaymentsConfigurationError);
        return (error as PaymentsConfigurationError).option;
      }
      throw new Error('expected a PaymentsConfigurationError');
    };
    expect(optionOf(() => standardWebhooks({ secrets: 'whsec_' }))).toBe('standardWebhooks({ secrets })');
    expect(optionOf(() => standardWebhooksVerifier({ secrets: 'whsec_' }))).toBe(
      'standardWebhooksVerifier({ secrets })',
    );
    expect(optionOf(() => hmacScheme({ ...hmac, header: '' }))).toBe('hmacScheme({ header })');
    expect(optionOf(() => hmacVerifier({ ...hmac, header: '' }))).toBe('hmacVerifier({ header })');
  });
});
