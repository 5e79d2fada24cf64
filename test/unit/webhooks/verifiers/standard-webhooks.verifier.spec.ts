import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { inspect } from 'node:util';
import { PaymentsConfigurationError, standardWebhooksVerifier } from '../../../../lib/index.js';
import { signStandardWebhook } from '../../../../lib/webhooks/verifiers/standard-webhooks.scheme.js';

// Golden vector of the Standard Webhooks specification and its reference libraries.
const GOLDEN = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const OTHER_SECRET = 'whsec_' + Buffer.from('another-endpoint-secret-32-bytes').toString('base64');
const atGolden = () => GOLDEN.timestamp * 1000;

function input(headers: Record<string, string | string[] | undefined>, body: string | Buffer = GOLDEN.body) {
  return { rawBody: Buffer.isBuffer(body) ? body : Buffer.from(body), headers };
}
function goldenHeaders(overrides: Record<string, string | undefined> = {}) {
  return {
    'webhook-id': GOLDEN.id,
    'webhook-timestamp': String(GOLDEN.timestamp),
    'webhook-signature': GOLDEN.signature,
    ...overrides,
  };
}

describe('standardWebhooksVerifier', () => {
  describe('golden vector', () => {
    it('signStandardWebhook reproduces the specification signature', () => {
      expect(signStandardWebhook(GOLDEN.secret, GOLDEN.id, GOLDEN.timestamp, GOLDEN.body)).toBe(GOLDEN.signature);
    });

    it('[W5] accepts the specification delivery', () => {
      const verifier = standardWebhooksVerifier({ secrets: GOLDEN.secret, now: atGolden });
      expect(verifier.verify(input(goldenHeaders()))).toEqual({ valid: true });
    });

    it('accepts the secret without its whsec_ prefix', () => {
      const verifier = standardWebhooksVerifier({ secrets: GOLDEN.secret.slice('whsec_'.length), now: atGolden });
      expect(verifier.verify(input(goldenHeaders()))).toEqual({ valid: true });
    });

    it('accepts a PaymentsRuntime-like { now() } as clock', () => {
      const verifier = standardWebhooksVerifier({ secrets: GOLDEN.secret, now: { now: atGolden } });
      expect(verifier.verify(input(goldenHeaders()))).toEqual({ valid: true });
    });

    it('reads header names case-insensitively', () => {
      const verifier = standardWebhooksVerifier({ secrets: GOLDEN.secret, now: atGolden });
      const headers = {
        'Webhook-Id': GOLDEN.id,
        'WEBHOOK-TIMESTAMP': String(GOLDEN.timestamp),
        'Webhook-Signature': GOLDEN.signature,
      };
      expect(verifier.verify(input(headers))).toEqual({ valid: true });
    });
  });

  describe('round trips with the reference library (standardwebhooks npm)', () => {
    it('accepts what the reference library signs', () => {
      const reference = new Webhook(OTHER_SECRET);
      const body = JSON.stringify({ id: 'evt', event: 'payment_intent.succeeded' });
      const timestamp = new Date(1_700_000_000_000);
      const signature = reference.sign('msg_1', timestamp, body);
      const verifier = standardWebhooksVerifier({ secrets: OTHER_SECRET, now: () => timestamp.getTime() });
      const result = verifier.verify(
        input({ 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': signature }, body),
      );
      expect(result).toEqual({ valid: true });
    });

    it('produces what the reference library verifies', () => {
      // The reference library reads the system clock, so this signs with the current time.
      const seconds = Math.floor(Date.now() / 1000);
      const body = '{"id":"e1","event":"setup_intent.succeeded"}';
      const signature = signStandardWebhook(OTHER_SECRET, 'msg_2', seconds, body);
      const reference = new Webhook(OTHER_SECRET);
      const headers = { 'webhook-id': 'msg_2', 'webhook-timestamp': String(seconds), 'webhook-signature': signature };
      expect(reference.verify(body, headers)).toEqual(JSON.parse(body));
    });
  });

  describe('[W7] secret rotation', () => {
    it('[W7] accepts a delivery signed with the first of two secrets', () => {
      const verifier = standardWebhooksVerifier({ secrets: [GOLDEN.secret, OTHER_SECRET], now: atGolden });
      expect(verifier.verify(input(goldenHeaders()))).toEqual({ valid: true });
    });

    it('[W7] accepts a delivery signed with the second of two secrets', () => {
      const verifier = standardWebhooksVerifier({ secrets: [OTHER_SECRET, GOLDEN.secret], now: atGolden });
      expect(verifier.verify(input(goldenHeaders()))).toEqual({ valid: true });
    });

    it('[W7] refuses a delivery signed with a secret that is not configured', () => {
      const verifier = standardWebhooksVerifier({ secrets: [OTHER_SECRET], now: atGolden });
      expect(verifier.verify(input(goldenHeaders()))).toEqual({ valid: false, reason: 'signature_mismatch' });
    });
  });

  describe('timestamp tolerance (injected clock)', () => {
    const verifierAt = (nowSeconds: number, toleranceSeconds?: number) =>
      standardWebhooksVerifier({ secrets: GOLDEN.secret, toleranceSeconds, now: () => nowSeconds * 1000 });

    it('accepts a timestamp exactly 300 s old by default', () => {
      expect(verifierAt(GOLDEN.timestamp + 300).verify(input(goldenHeaders()))).toEqual({ valid: true });
    });

    it('[W5] refuses a stale timestamp beyond the tolerance', () => {
      expect(verifierAt(GOLDEN.timestamp + 301).verify(input(goldenHeaders()))).toEqual({
        valid: false,
        reason: 'timestamp_out_of_tolerance',
      });
    });

    it('accepts a timestamp 300 s in the future by default', () => {
      expect(verifierAt(GOLDEN.timestamp - 300).verify(input(goldenHeaders()))).toEqual({ valid: true });
    });

    it('[W5] refuses a future timestamp beyond the tolerance', () => {
      expect(verifierAt(GOLDEN.timestamp - 301).verify(input(goldenHeaders()))).toEqual({
        valid: false,
        reason: 'timestamp_out_of_tolerance',
      });
    });

    it('honours a configured toleranceSeconds', () => {
      expect(verifierAt(GOLDEN.timestamp + 11, 10).verify(input(goldenHeaders()))).toEqual({
        valid: false,
        reason: 'timestamp_out_of_tolerance',
      });
      expect(verifierAt(GOLDEN.timestamp + 10, 10).verify(input(goldenHeaders()))).toEqual({ valid: true });
    });

    it('refuses a non-numeric timestamp', () => {
      const result = verifierAt(GOLDEN.timestamp).verify(input(goldenHeaders({ 'webhook-timestamp': 'not-a-number' })));
      expect(result).toEqual({ valid: false, reason: 'malformed_timestamp' });
    });

    it('refuses a timestamp with trailing junk', () => {
      const result = verifierAt(GOLDEN.timestamp).verify(
        input(goldenHeaders({ 'webhook-timestamp': `${GOLDEN.timestamp}abc` })),
      );
      expect(result).toEqual({ valid: false, reason: 'malformed_timestamp' });
    });

    it('checks the timestamp before the signature (a replayed old delivery is stale, not mismatched)', () => {
      const result = verifierAt(GOLDEN.timestamp + 10_000).verify(
        input(goldenHeaders({ 'webhook-signature': 'v1,AAAA' })),
      );
      expect(result).toEqual({ valid: false, reason: 'timestamp_out_of_tolerance' });
    });
  });

  describe('[W1] raw body', () => {
    const verifier = standardWebhooksVerifier({ secrets: GOLDEN.secret, now: atGolden });

    it('[W1] refuses a tampered body', () => {
      expect(verifier.verify(input(goldenHeaders(), '{"test": 2432232315}'))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('[W1] refuses the same JSON re-serialised with different spacing', () => {
      const reserialised = JSON.stringify(JSON.parse(GOLDEN.body));
      expect(reserialised).not.toBe(GOLDEN.body);
      expect(verifier.verify(input(goldenHeaders(), reserialised))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('[W1] verifies the bytes given, including non-ASCII UTF-8', () => {
      const body = Buffer.from('{"name":"Zoë ✓"}', 'utf8');
      const headers = goldenHeaders({
        'webhook-signature': signStandardWebhook(GOLDEN.secret, GOLDEN.id, GOLDEN.timestamp, body),
      });
      expect(verifier.verify(input(headers, body))).toEqual({ valid: true });
    });

    it('accepts a correctly signed empty body', () => {
      const headers = goldenHeaders({
        'webhook-signature': signStandardWebhook(GOLDEN.secret, GOLDEN.id, GOLDEN.timestamp, ''),
      });
      expect(verifier.verify(input(headers, ''))).toEqual({ valid: true });
    });

    it('refuses an empty body sent with the signature of a non-empty one', () => {
      expect(verifier.verify(input(goldenHeaders(), ''))).toEqual({ valid: false, reason: 'signature_mismatch' });
    });

    it('refuses a delivery whose webhook-id was changed (the id is signed)', () => {
      expect(verifier.verify(input(goldenHeaders({ 'webhook-id': 'msg_other' })))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });
  });

  describe('missing and malformed headers', () => {
    const verifier = standardWebhooksVerifier({ secrets: GOLDEN.secret, now: atGolden });

    it('refuses a delivery without webhook-id', () => {
      expect(verifier.verify(input(goldenHeaders({ 'webhook-id': undefined })))).toEqual({
        valid: false,
        reason: 'missing_id',
      });
    });

    it('refuses a delivery without webhook-timestamp', () => {
      expect(verifier.verify(input(goldenHeaders({ 'webhook-timestamp': undefined })))).toEqual({
        valid: false,
        reason: 'missing_timestamp',
      });
    });

    it('refuses a delivery without webhook-signature', () => {
      expect(verifier.verify(input(goldenHeaders({ 'webhook-signature': undefined })))).toEqual({
        valid: false,
        reason: 'missing_signature',
      });
    });

    it('treats an empty webhook-signature as missing', () => {
      expect(verifier.verify(input(goldenHeaders({ 'webhook-signature': '' })))).toEqual({
        valid: false,
        reason: 'missing_signature',
      });
    });

    it('refuses a truncated "v1," entry without throwing', () => {
      expect(verifier.verify(input(goldenHeaders({ 'webhook-signature': 'v1,' })))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('refuses a signature with only the version and no comma', () => {
      expect(verifier.verify(input(goldenHeaders({ 'webhook-signature': 'v1' })))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('refuses a truncated signature (length mismatch) without throwing', () => {
      const truncated = GOLDEN.signature.slice(0, -8);
      expect(verifier.verify(input(goldenHeaders({ 'webhook-signature': truncated })))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('ignores entries of other versions even when their digest matches', () => {
      const v2 = GOLDEN.signature.replace('v1,', 'v2,');
      expect(verifier.verify(input(goldenHeaders({ 'webhook-signature': v2 })))).toEqual({
        valid: false,
        reason: 'malformed_signature',
      });
    });

    it('accepts a multi-signature header with junk entries when one v1 entry matches', () => {
      const header = `v1a,${GOLDEN.signature.slice(3)} v2,abc junk v1,Ym9ndXM= ${GOLDEN.signature} v1,%%%`;
      expect(verifier.verify(input(goldenHeaders({ 'webhook-signature': header })))).toEqual({ valid: true });
    });

    it('refuses a multi-signature header in which no v1 entry matches', () => {
      const header = 'v1,Ym9ndXM= v2,abc v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=';
      expect(verifier.verify(input(goldenHeaders({ 'webhook-signature': header })))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('never puts a header value or secret into the reason', () => {
      const result = verifier.verify(input(goldenHeaders({ 'webhook-signature': 'v1,Ym9ndXM=' })));
      expect(JSON.stringify(result)).not.toContain('Ym9ndXM');
      expect(JSON.stringify(result)).not.toContain(GOLDEN.secret.slice(6));
    });
  });

  describe('configuration errors at construction', () => {
    it('throws PaymentsConfigurationError for an empty secret', () => {
      expect(() => standardWebhooksVerifier({ secrets: '' })).toThrow(PaymentsConfigurationError);
    });

    it('throws PaymentsConfigurationError for "whsec_" alone', () => {
      expect(() => standardWebhooksVerifier({ secrets: 'whsec_' })).toThrow(/empty after the 'whsec_' prefix/);
    });

    it('throws for an empty array of secrets', () => {
      expect(() => standardWebhooksVerifier({ secrets: [] })).toThrow(PaymentsConfigurationError);
    });

    it('names the index of the bad secret in an array', () => {
      expect(() => standardWebhooksVerifier({ secrets: [GOLDEN.secret, 'whsec_'] })).toThrow(/secrets \}\)\[1\]/);
    });

    it('throws for a secret that is not base64, without echoing it', () => {
      const secret = 'whsec_not base64 at all!';
      let caught: unknown;
      try {
        standardWebhooksVerifier({ secrets: secret });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(PaymentsConfigurationError);
      expect(String((caught as Error).message)).not.toContain('not base64 at all');
      expect(inspect(caught)).not.toContain('not base64 at all');
    });

    it('throws for a negative toleranceSeconds', () => {
      expect(() => standardWebhooksVerifier({ secrets: GOLDEN.secret, toleranceSeconds: -1 })).toThrow(
        /toleranceSeconds/,
      );
    });

    it('never echoes a valid secret in an error about another option', () => {
      try {
        standardWebhooksVerifier({ secrets: GOLDEN.secret, toleranceSeconds: Number.NaN });
        throw new Error('expected a throw');
      } catch (error) {
        expect(inspect(error)).not.toContain('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
      }
    });
  });
});
