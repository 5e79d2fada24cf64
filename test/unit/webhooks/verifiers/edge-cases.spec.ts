import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import {
  hmacVerifier,
  PaymentsConfigurationError,
  PaymentsModule,
  standardWebhooksVerifier,
  type PaymentsModuleOptions,
} from '../../../../lib/index.js';
import { type HmacVerifierOptions } from '../../../../lib/webhooks/index.js';

/*
 * Signature edge cases ported from what the public Standard Webhooks libraries test, covering what
 * standard-webhooks.verifier.spec.ts and hmac.verifier.spec.ts do not: boot errors through the
 * module, null / asymmetric keys, multi-valued headers, timestamp and signature spellings.
 * Signatures are computed here with node:crypto, independently of the library's signer.
 */

// The specification's golden vector (also in the reference libraries' tests).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MSG_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = 1614265330;
const BODY = '{"test": 2432232314}';
const SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const atTimestamp = () => TIMESTAMP * 1000;

const standard = () => standardWebhooksVerifier({ secrets: SECRET, now: atTimestamp });
const input = (headers: Record<string, string | string[] | undefined>, body = BODY) => ({
  rawBody: Buffer.from(body),
  headers,
});
const golden = (overrides: Record<string, string | string[] | undefined> = {}) => ({
  'webhook-id': MSG_ID,
  'webhook-timestamp': String(TIMESTAMP),
  'webhook-signature': SIGNATURE,
  ...overrides,
});

/** Boots PaymentsModule.forRootAsync whose factory builds the verifier from a "config" value, as an app reading env vars does. */
async function bootWith(buildVerifier: () => PaymentsModuleOptions['webhooks']): Promise<unknown> {
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRootAsync({
          useFactory: (): PaymentsModuleOptions => ({
            apiKey: 'sk_test_EDGECASES_4c2e8a1f',
            environment: 'sandbox',
            baseUrl: 'https://sandbox.payments.test',
            webhooks: buildVerifier(),
          }),
        }),
      ],
    }).compile();
    await moduleRef.close();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('signature edge cases (ported from the public Standard Webhooks libraries)', () => {
  describe('standardWebhooksVerifier: keys', () => {
    it.each([
      ['an empty secret', ''],
      ["'whsec_' alone", 'whsec_'],
      ['a missing environment variable (undefined)', undefined],
    ])(
      'fails the boot of PaymentsModule.forRootAsync with PaymentsConfigurationError for %s',
      async (_label, secret) => {
        const error = await bootWith(() => ({ verifier: standardWebhooksVerifier({ secrets: secret as string }) }));
        expect(error).toBeInstanceOf(PaymentsConfigurationError);
        expect((error as PaymentsConfigurationError).option).toMatch(/^standardWebhooksVerifier\(\{ secrets \}\)/);
      },
    );

    it('refuses a null secret at construction', () => {
      expect(() => standardWebhooksVerifier({ secrets: null as unknown as string })).toThrow(
        PaymentsConfigurationError,
      );
    });

    it.each([
      'whsk_',
      'whpk_',
      `whpk_${Buffer.alloc(32, 1).toString('base64')}`,
      `whsk_${Buffer.alloc(64, 1).toString('base64')}`,
    ])('refuses the asymmetric (v1a) key %s at construction, without echoing it', (key) => {
      let caught: unknown;
      try {
        standardWebhooksVerifier({ secrets: key });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PaymentsConfigurationError);
      if (key.length > 8) expect(inspect(caught, { showHidden: true, depth: 12 })).not.toContain(key.slice(5, 30));
    });
  });

  describe('standardWebhooksVerifier: headers with several values', () => {
    it('refuses two webhook-id values', () => {
      expect(standard().verify(input(golden({ 'webhook-id': [MSG_ID, MSG_ID] })))).toEqual({
        valid: false,
        reason: 'malformed_id',
      });
    });

    it('refuses two webhook-timestamp values, even equal ones', () => {
      expect(standard().verify(input(golden({ 'webhook-timestamp': [String(TIMESTAMP), String(TIMESTAMP)] })))).toEqual(
        {
          valid: false,
          reason: 'malformed_timestamp',
        },
      );
    });

    it('accepts signature entries spread over two webhook-signature values when one matches', () => {
      const headers = golden({
        'webhook-signature': ['v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,abc', `v1a,xyz ${SIGNATURE}`],
      });
      expect(standard().verify(input(headers))).toEqual({ valid: true });
    });

    it('refuses signature entries spread over two values when none matches', () => {
      const headers = golden({
        'webhook-signature': [
          'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
          'v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
        ],
      });
      expect(standard().verify(input(headers))).toEqual({ valid: false, reason: 'signature_mismatch' });
    });
  });

  describe('standardWebhooksVerifier: timestamp spellings', () => {
    it.each([
      ['negative', `-${TIMESTAMP}`],
      ['with a plus sign', `+${TIMESTAMP}`],
      ['with a fraction', `${TIMESTAMP}.0`],
      ['in exponent notation', '1.61426533e9'],
      ['in hexadecimal', `0x${TIMESTAMP.toString(16)}`],
      ['in milliseconds', `${TIMESTAMP}000`],
      ['in full-width digits', String(TIMESTAMP).replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d)))],
      ['with a space inside', `${String(TIMESTAMP).slice(0, 4)} ${String(TIMESTAMP).slice(4)}`],
    ])('refuses a timestamp %s as malformed', (_label, timestamp) => {
      expect(standard().verify(input(golden({ 'webhook-timestamp': timestamp })))).toEqual({
        valid: false,
        reason: 'malformed_timestamp',
      });
    });
  });

  describe('standardWebhooksVerifier: signature spellings', () => {
    const digest = SIGNATURE.slice(3);
    it.each([
      ['the partial signature of the reference tests (first 8 characters)', SIGNATURE.slice(0, 8)],
      ['the digest in base64url', `v1,${digest.replace(/\+/g, '-').replace(/\//g, '_')}`],
      ['an upper-case version tag', `V1,${digest}`],
      ['only an asymmetric v1a entry carrying the v1 digest', `v1a,${digest}`],
      ['a semicolon instead of the comma', `v1;${digest}`],
      ['the digest alone, without a version', digest],
    ])('refuses %s as malformed, without throwing', (_label, header) => {
      expect(standard().verify(input(golden({ 'webhook-signature': header })))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });
  });

  describe('hmacVerifier', () => {
    const SECRET_TEXT = 'edge-case-endpoint-secret';
    const NOW_S = 1_700_000_000;
    const options: HmacVerifierOptions = {
      secrets: SECRET_TEXT,
      header: 'x-signature',
      prefix: 'sha256=',
      timestampHeader: 'x-timestamp',
      signedPayload: 'timestamp.body',
      now: () => NOW_S * 1000,
    };
    const sign = (body = BODY, timestamp = String(NOW_S)) =>
      `sha256=${createHmac('sha256', SECRET_TEXT).update(`${timestamp}.${body}`).digest('hex')}`;

    it.each([
      ['a null secret', null],
      ['an undefined secret (missing environment variable)', undefined],
      ['a whitespace-only secret', '   '],
    ])('refuses %s at construction', (_label, secret) => {
      expect(() => hmacVerifier({ ...options, secrets: secret as unknown as string })).toThrow(
        PaymentsConfigurationError,
      );
    });

    it('fails the boot of PaymentsModule.forRootAsync when the factory reads an empty secret', async () => {
      const error = await bootWith(() => ({ verifier: hmacVerifier({ ...options, secrets: '' }) }));
      expect(error).toBeInstanceOf(PaymentsConfigurationError);
    });

    it('refuses the prefix in another case (SHA256=) as malformed', () => {
      const header = sign().replace('sha256=', 'SHA256=');
      expect(hmacVerifier(options).verify(input({ 'x-timestamp': String(NOW_S), 'x-signature': header }))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('refuses the prefix with an empty digest, without throwing', () => {
      expect(
        hmacVerifier(options).verify(input({ 'x-timestamp': String(NOW_S), 'x-signature': 'sha256=' })),
      ).toMatchObject({ valid: false });
    });

    it('refuses a base64url digest when base64 is configured', () => {
      const verifier = hmacVerifier({ ...options, prefix: undefined, encoding: 'base64' });
      const digest = createHmac('sha256', SECRET_TEXT).update(`${NOW_S}.${BODY}`).digest('base64url');
      const withUrlAlphabet = /[-_]/.test(digest) ? digest : `${digest.slice(0, -1)}-`;
      expect(verifier.verify(input({ 'x-timestamp': String(NOW_S), 'x-signature': withUrlAlphabet }))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('accepts two signature values when one matches (one of them signed with the current secret)', () => {
      const headers = { 'x-timestamp': String(NOW_S), 'x-signature': [`sha256=${'0'.repeat(64)}`, sign()] };
      expect(hmacVerifier(options).verify(input(headers))).toEqual({ valid: true });
    });

    it('refuses two timestamp values', () => {
      const headers = { 'x-timestamp': [String(NOW_S), String(NOW_S)], 'x-signature': sign() };
      expect(hmacVerifier(options).verify(input(headers))).toEqual({ valid: false, reason: 'malformed_timestamp' });
    });

    it.each([`-${NOW_S}`, `${NOW_S}.5`, `${NOW_S}000`, '0x6553f100'])(
      'refuses the timestamp %s as malformed',
      (timestamp) => {
        expect(
          hmacVerifier(options).verify(input({ 'x-timestamp': timestamp, 'x-signature': sign(BODY, timestamp) })),
        ).toEqual({
          valid: false,
          reason: 'malformed_timestamp',
        });
      },
    );

    it('refuses a signed empty body sent with a non-empty one, and accepts it sent empty', () => {
      const signedEmpty = sign('');
      expect(
        hmacVerifier(options).verify(input({ 'x-timestamp': String(NOW_S), 'x-signature': signedEmpty }, BODY)),
      ).toEqual({ valid: false, reason: 'signature_mismatch' });
      expect(
        hmacVerifier(options).verify(input({ 'x-timestamp': String(NOW_S), 'x-signature': signedEmpty }, '')),
      ).toEqual({ valid: true });
    });
  });
});
