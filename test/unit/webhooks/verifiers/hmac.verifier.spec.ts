import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { hmacVerifier, PaymentsConfigurationError } from '../../../../lib/index.js';
import { type HmacVerifierOptions } from '../../../../lib/webhooks/index.js';

const SECRET = 'endpoint-secret-one';
const SECRET_2 = 'endpoint-secret-two';
const BODY = '{"id":"3f1c","event":"payment_intent.succeeded", "data":{}}';
const NOW_S = 1_700_000_000;
const clock =
  (seconds = NOW_S) =>
  () =>
    seconds * 1000;

/** Independent computation (not the library's) of what a sender puts in the header. */
function digest(secret: string, payload: string, algorithm = 'sha256', encoding: 'hex' | 'base64' = 'hex'): string {
  return createHmac(algorithm, secret).update(payload).digest(encoding);
}
const input = (headers: Record<string, string | string[] | undefined>, body: string = BODY) => ({
  rawBody: Buffer.from(body),
  headers,
});

describe('hmacVerifier', () => {
  describe('defaults: sha256, hex, raw body', () => {
    const verifier = hmacVerifier({ secrets: SECRET, header: 'X-Signature' });

    it('[W5] accepts the hex HMAC-SHA256 of the raw body', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY) }))).toEqual({ valid: true });
    });

    it('accepts an upper-case hex digest', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY).toUpperCase() }))).toEqual({ valid: true });
    });

    it('[W1] refuses a tampered body', () => {
      expect(
        verifier.verify(input({ 'x-signature': digest(SECRET, BODY) }, BODY.replace('succeeded', 'cancelled'))),
      ).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('[W1] refuses the same JSON re-serialised with different spacing', () => {
      const reserialised = JSON.stringify(JSON.parse(BODY));
      expect(reserialised).not.toBe(BODY);
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY) }, reserialised))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('refuses a delivery without the signature header', () => {
      expect(verifier.verify(input({}))).toEqual({ valid: false, reason: 'missing_signature' });
    });

    it('refuses a base64 digest when hex is configured (wrong encoding), without throwing', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY, 'sha256', 'base64') }))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('refuses a hex digest with an odd length, without throwing', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY).slice(1) }))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('refuses a truncated digest (length mismatch), without throwing', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY).slice(0, 32) }))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('refuses a sha512 digest when sha256 is configured', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY, 'sha512') }))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('accepts a correctly signed empty body', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, '') }, ''))).toEqual({ valid: true });
    });

    it('[W8] reads only the configured header, assuming no scheme of its own', () => {
      const headers = {
        'webhook-signature': digest(SECRET, BODY),
        'x-hub-signature-256': `sha256=${digest(SECRET, BODY)}`,
      };
      expect(verifier.verify(input(headers))).toEqual({ valid: false, reason: 'missing_signature' });
    });
  });

  describe('[W7] secret rotation', () => {
    const verifier = hmacVerifier({ secrets: [SECRET, SECRET_2], header: 'x-signature' });

    it('[W7] accepts a delivery signed with the first secret', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY) }))).toEqual({ valid: true });
    });

    it('[W7] accepts a delivery signed with the second secret', () => {
      expect(verifier.verify(input({ 'x-signature': digest(SECRET_2, BODY) }))).toEqual({ valid: true });
    });

    it('[W7] refuses a delivery signed with a retired secret', () => {
      const rotated = hmacVerifier({ secrets: [SECRET_2], header: 'x-signature' });
      expect(rotated.verify(input({ 'x-signature': digest(SECRET, BODY) }))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });
  });

  describe('algorithm, encoding and prefix', () => {
    it('accepts sha512 when configured', () => {
      const verifier = hmacVerifier({ secrets: SECRET, header: 'x-signature', algorithm: 'sha512' });
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY, 'sha512') }))).toEqual({ valid: true });
    });

    it('accepts base64 when configured', () => {
      const verifier = hmacVerifier({ secrets: SECRET, header: 'x-signature', encoding: 'base64' });
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, BODY, 'sha256', 'base64') }))).toEqual({
        valid: true,
      });
    });

    it('refuses invalid base64 characters when base64 is configured, without throwing', () => {
      const verifier = hmacVerifier({ secrets: SECRET, header: 'x-signature', encoding: 'base64' });
      expect(verifier.verify(input({ 'x-signature': '***not base64***' }))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('accepts the digest after the configured prefix', () => {
      const verifier = hmacVerifier({ secrets: SECRET, header: 'x-hub-signature-256', prefix: 'sha256=' });
      expect(verifier.verify(input({ 'x-hub-signature-256': `sha256=${digest(SECRET, BODY)}` }))).toEqual({
        valid: true,
      });
    });

    it('refuses a digest without the configured prefix', () => {
      const verifier = hmacVerifier({ secrets: SECRET, header: 'x-hub-signature-256', prefix: 'sha256=' });
      expect(verifier.verify(input({ 'x-hub-signature-256': digest(SECRET, BODY) }))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('refuses a digest with another prefix', () => {
      const verifier = hmacVerifier({ secrets: SECRET, header: 'x-hub-signature-256', prefix: 'sha256=' });
      expect(verifier.verify(input({ 'x-hub-signature-256': `sha1=${digest(SECRET, BODY)}` }))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });
  });

  describe('timestamp header', () => {
    const options: HmacVerifierOptions = {
      secrets: SECRET,
      header: 'x-signature',
      timestampHeader: 'x-timestamp',
      signedPayload: 'timestamp.body',
    };

    it('accepts timestamp.body: the HMAC of `${timestamp}.${body}`', () => {
      const verifier = hmacVerifier({ ...options, now: clock() });
      const headers = { 'x-timestamp': String(NOW_S), 'x-signature': digest(SECRET, `${NOW_S}.${BODY}`) };
      expect(verifier.verify(input(headers))).toEqual({ valid: true });
    });

    it('refuses in timestamp.body mode a digest of the body alone', () => {
      const verifier = hmacVerifier({ ...options, now: clock() });
      const headers = { 'x-timestamp': String(NOW_S), 'x-signature': digest(SECRET, BODY) };
      expect(verifier.verify(input(headers))).toEqual({ valid: false, reason: 'signature_mismatch' });
    });

    it('refuses in timestamp.body mode a timestamp changed after signing', () => {
      const verifier = hmacVerifier({ ...options, now: clock() });
      const headers = { 'x-timestamp': String(NOW_S + 1), 'x-signature': digest(SECRET, `${NOW_S}.${BODY}`) };
      expect(verifier.verify(input(headers))).toEqual({ valid: false, reason: 'signature_mismatch' });
    });

    it('refuses a missing timestamp header', () => {
      const verifier = hmacVerifier({ ...options, now: clock() });
      expect(verifier.verify(input({ 'x-signature': digest(SECRET, `${NOW_S}.${BODY}`) }))).toEqual({
        valid: false,
        reason: 'missing_timestamp',
      });
    });

    it('refuses a non-numeric timestamp', () => {
      const verifier = hmacVerifier({ ...options, now: clock() });
      const headers = { 'x-timestamp': '2023-11-14T22:13:20Z', 'x-signature': digest(SECRET, `${NOW_S}.${BODY}`) };
      expect(verifier.verify(input(headers))).toEqual({ valid: false, reason: 'malformed_timestamp' });
    });

    it.each([
      ['300 s old', NOW_S + 300, { valid: true }],
      ['301 s old', NOW_S + 301, { valid: false, reason: 'timestamp_out_of_tolerance' }],
      ['300 s ahead', NOW_S - 300, { valid: true }],
      ['301 s ahead', NOW_S - 301, { valid: false, reason: 'timestamp_out_of_tolerance' }],
    ])('[W5] with the default tolerance, a timestamp %s gives %j', (_label, nowSeconds, expected) => {
      const verifier = hmacVerifier({ ...options, now: clock(nowSeconds) });
      const headers = { 'x-timestamp': String(NOW_S), 'x-signature': digest(SECRET, `${NOW_S}.${BODY}`) };
      expect(verifier.verify(input(headers))).toEqual(expected);
    });

    it('checks the timestamp window in body mode too (timestamp not signed)', () => {
      const verifier = hmacVerifier({
        secrets: SECRET,
        header: 'x-signature',
        timestampHeader: 'x-timestamp',
        toleranceSeconds: 5,
        now: clock(NOW_S + 6),
      });
      const headers = { 'x-timestamp': String(NOW_S), 'x-signature': digest(SECRET, BODY) };
      expect(verifier.verify(input(headers))).toEqual({ valid: false, reason: 'timestamp_out_of_tolerance' });
    });
  });

  describe('configuration errors at construction', () => {
    const base: HmacVerifierOptions = { secrets: SECRET, header: 'x-signature' };
    const bad = (overrides: Record<string, unknown>) => () =>
      hmacVerifier({ ...base, ...overrides } as HmacVerifierOptions);

    it('throws for an empty secret', () => {
      expect(bad({ secrets: '' })).toThrow(PaymentsConfigurationError);
    });

    it('throws for an empty array of secrets', () => {
      expect(bad({ secrets: [] })).toThrow(/secrets/);
    });

    it('throws for an empty header', () => {
      expect(bad({ header: '' })).toThrow(/header/);
    });

    it('throws for an unknown algorithm', () => {
      expect(bad({ algorithm: 'md5' })).toThrow(/algorithm/);
    });

    it('throws for an unknown encoding', () => {
      expect(bad({ encoding: 'base32' })).toThrow(/encoding/);
    });

    it("throws for signedPayload 'timestamp.body' without timestampHeader", () => {
      expect(bad({ signedPayload: 'timestamp.body' })).toThrow(/timestampHeader/);
    });

    it('throws for a negative tolerance', () => {
      expect(bad({ timestampHeader: 'x-timestamp', toleranceSeconds: -5 })).toThrow(/toleranceSeconds/);
    });

    it('names the option and the fix, and never echoes a secret', () => {
      let caught: unknown;
      try {
        hmacVerifier({ secrets: [SECRET, ' '], header: 'x-signature' });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PaymentsConfigurationError);
      expect((caught as PaymentsConfigurationError).option).toBe('hmacVerifier({ secrets })[1]');
      expect((caught as Error).message).toMatch(/Fix: /);
      expect(inspect(caught)).not.toContain(SECRET);
      expect(JSON.stringify(caught)).not.toContain(SECRET);
    });
  });
});
