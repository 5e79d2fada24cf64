import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { hmacVerifier, standardWebhooksVerifier } from '../../../lib/index.js';
import { type HmacVerifierOptions } from '../../../lib/webhooks/index.js';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';

const WHSEC = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW_S = 1_700_000_000;
const now = () => NOW_S * 1000;
const asInput = (signed: { rawBody: string; headers: Record<string, string> }) => ({
  rawBody: Buffer.from(signed.rawBody),
  headers: signed.headers,
});

describe('signWebhook', () => {
  describe('standard-webhooks', () => {
    it('produces a delivery standardWebhooksVerifier accepts', () => {
      const signed = signWebhook(createPaymentEvent('payment_intent.succeeded'), {
        scheme: 'standard-webhooks',
        secret: WHSEC,
        timestamp: NOW_S,
      });
      expect(standardWebhooksVerifier({ secrets: WHSEC, now }).verify(asInput(signed))).toEqual({ valid: true });
    });

    it('produces a delivery the reference library accepts', () => {
      const signed = signWebhook({ hello: 'world' }, { scheme: 'standard-webhooks', secret: WHSEC });
      expect(new Webhook(WHSEC).verify(signed.rawBody, signed.headers)).toEqual({ hello: 'world' });
    });

    it('serialises an object payload once, with JSON.stringify', () => {
      const event = createPaymentEvent('setup_intent.failed');
      expect(signWebhook(event, { scheme: 'standard-webhooks', secret: WHSEC }).rawBody).toBe(JSON.stringify(event));
    });

    it('signs a string payload as it is', () => {
      const body = '{ "spaced" :  true }';
      const signed = signWebhook(body, { scheme: 'standard-webhooks', secret: WHSEC, timestamp: NOW_S });
      expect(signed.rawBody).toBe(body);
      expect(standardWebhooksVerifier({ secrets: WHSEC, now }).verify(asInput(signed))).toEqual({ valid: true });
    });

    it('signs a Buffer payload as it is', () => {
      const signed = signWebhook(Buffer.from('{"a":1}'), {
        scheme: 'standard-webhooks',
        secret: WHSEC,
        timestamp: NOW_S,
      });
      expect(signed.rawBody).toBe('{"a":1}');
      expect(standardWebhooksVerifier({ secrets: WHSEC, now }).verify(asInput(signed))).toEqual({ valid: true });
    });

    it('uses the injected timestamp (seconds or Date) in webhook-timestamp', () => {
      expect(
        signWebhook({}, { scheme: 'standard-webhooks', secret: WHSEC, timestamp: NOW_S }).headers['webhook-timestamp'],
      ).toBe(String(NOW_S));
      expect(
        signWebhook({}, { scheme: 'standard-webhooks', secret: WHSEC, timestamp: new Date(now()) }).headers[
          'webhook-timestamp'
        ],
      ).toBe(String(NOW_S));
      expect(signWebhook({}, { scheme: 'standard-webhooks', secret: WHSEC, now }).headers['webhook-timestamp']).toBe(
        String(NOW_S),
      );
    });

    it("uses the payload's id as webhook-id by default, and msgId when given", () => {
      const event = createPaymentEvent('payment_intent.cancelled');
      expect(signWebhook(event, { scheme: 'standard-webhooks', secret: WHSEC }).headers['webhook-id']).toBe(event.id);
      expect(
        signWebhook(event, { scheme: 'standard-webhooks', secret: WHSEC, msgId: 'msg_x' }).headers['webhook-id'],
      ).toBe('msg_x');
    });

    it('signs with the first of `secrets`, so verifier options can be reused', () => {
      const options = { secrets: [WHSEC], toleranceSeconds: 60 };
      const signed = signWebhook({}, { scheme: 'standard-webhooks', ...options, timestamp: NOW_S });
      expect(standardWebhooksVerifier({ ...options, now }).verify(asInput(signed))).toEqual({ valid: true });
    });

    it('a delivery signed with another secret is refused', () => {
      const signed = signWebhook(
        {},
        {
          scheme: 'standard-webhooks',
          secret: 'whsec_' + Buffer.from('x'.repeat(24)).toString('base64'),
          timestamp: NOW_S,
        },
      );
      expect(standardWebhooksVerifier({ secrets: WHSEC, now }).verify(asInput(signed))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });
  });

  describe('hmac', () => {
    it.each<[string, Omit<HmacVerifierOptions, 'secrets'>]>([
      ['defaults (sha256, hex, body)', { header: 'x-signature' }],
      ['sha512 base64 with a prefix', { header: 'x-sig', algorithm: 'sha512', encoding: 'base64', prefix: 'sha512=' }],
      ['timestamp.body', { header: 'x-sig', timestampHeader: 'x-ts', signedPayload: 'timestamp.body' }],
      ['timestamp header, body signed', { header: 'x-sig', timestampHeader: 'x-ts' }],
    ])('produces a delivery hmacVerifier accepts: %s', (_label, scheme) => {
      const signed = signWebhook(createPaymentEvent('charge.succeeded'), {
        scheme: 'hmac',
        secret: 's3cret',
        ...scheme,
        timestamp: NOW_S,
      });
      expect(hmacVerifier({ secrets: 's3cret', ...scheme, now }).verify(asInput(signed))).toEqual({ valid: true });
    });

    it('sets the timestamp header when one is configured', () => {
      const signed = signWebhook(
        {},
        { scheme: 'hmac', secret: 's', header: 'X-Sig', timestampHeader: 'X-Ts', timestamp: NOW_S },
      );
      expect(signed.headers['x-ts']).toBe(String(NOW_S));
      expect(signed.headers['x-sig']).toMatch(/^[0-9a-f]{64}$/);
    });

    it('rejects the same invalid options the verifier rejects', () => {
      expect(() =>
        signWebhook({}, { scheme: 'hmac', secret: 's', header: 'x', signedPayload: 'timestamp.body' }),
      ).toThrow(/timestampHeader/);
    });

    it('throws for a missing secret', () => {
      expect(() => signWebhook({}, { scheme: 'hmac', secret: '', header: 'x' })).toThrow(/secret/);
    });
  });
});
