import { describe, expect, it } from '@jest/globals';
import { randomBytes, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { PaymentsConfigurationError, standardWebhooks } from '../../../../lib/index.js';
import { standardWebhooksEd25519 } from '../../../../lib/webhooks/index.js';
import { createPaymentEvent, signWebhook } from '../../../../lib/testing/index.js';
import { ed25519KeyPair } from '../../../fixtures/webhooks/ed25519-keys.js';

/*
 * The Standard Webhooks asymmetric scheme (v1a, Ed25519): one file, cross-checked with Node's own
 * Ed25519 both ways, with rotation and a timestamp tolerance as for v1, and its keys checked at boot.
 */
const NOW_MS = Date.parse('2026-11-24T12:00:00Z');
const NOW_S = Math.floor(NOW_MS / 1000);
const now = () => NOW_MS;

const A = ed25519KeyPair();
const B = ed25519KeyPair();
const rawBody = JSON.stringify(createPaymentEvent('payment_intent.succeeded'));
const input = (body: string, headers: Record<string, string>) => ({ rawBody: Buffer.from(body), headers });

/** Headers as a sender using Node's crypto directly would send them. */
function nodeSigned(privateKey: KeyObject, msgId: string, seconds: number, body: string): Record<string, string> {
  const signature = nodeSign(null, Buffer.from(`${msgId}.${seconds}.${body}`), privateKey).toString('base64');
  return { 'webhook-id': msgId, 'webhook-timestamp': String(seconds), 'webhook-signature': `v1a,${signature}` };
}

describe('standardWebhooksEd25519', () => {
  describe("cross-checked with Node's crypto Ed25519", () => {
    it('verifies, with the public key alone, what node:crypto signs with the private key', () => {
      const receiver = standardWebhooksEd25519({ publicKeys: A.whpk, now });
      expect(receiver.verify(input(rawBody, nodeSigned(A.privateKey, 'msg_1', NOW_S, rawBody)))).toEqual({
        valid: true,
      });
    });

    it('signs `v1a,<base64>` over `${id}.${timestamp}.${body}` that node:crypto verifies with the public key', () => {
      const headers = standardWebhooksEd25519({ privateKeys: A.whsk, now }).sign(rawBody, { msgId: 'msg_2' });
      expect(headers['webhook-id']).toBe('msg_2');
      expect(headers['webhook-timestamp']).toBe(String(NOW_S));
      const [version, encoded] = headers['webhook-signature']!.split(',');
      expect(version).toBe('v1a');
      const signature = Buffer.from(encoded!, 'base64');
      expect(signature).toHaveLength(64);
      const content = Buffer.from(`msg_2.${NOW_S}.${rawBody}`);
      expect(nodeVerify(null, content, A.publicKey, signature)).toBe(true);
      expect(nodeVerify(null, content, B.publicKey, signature)).toBe(false);
    });

    it('takes the 64-byte private key form (seed + public key) and signs exactly as the 32-byte seed', () => {
      const seed = Buffer.from(A.whsk.slice('whsk_'.length), 'base64');
      const long = `whsk_${Buffer.concat([seed, Buffer.from(A.whpk.slice('whpk_'.length), 'base64')]).toString('base64')}`;
      const signing = { msgId: 'msg_3', timestamp: NOW_S };
      expect(standardWebhooksEd25519({ privateKeys: long }).sign(rawBody, signing)).toEqual(
        standardWebhooksEd25519({ privateKeys: A.whsk }).sign(rawBody, signing),
      );
    });
  });

  describe('refuses', () => {
    const receiver = standardWebhooksEd25519({ publicKeys: A.whpk, now });
    const good = nodeSigned(A.privateKey, 'msg_4', NOW_S, rawBody);

    it('a forged signature (64 random bytes)', () => {
      const forged = { ...good, 'webhook-signature': `v1a,${randomBytes(64).toString('base64')}` };
      expect(receiver.verify(input(rawBody, forged))).toEqual({ valid: false, reason: 'signature_mismatch' });
    });

    it("another key's signature", () => {
      const other = nodeSigned(B.privateKey, 'msg_4', NOW_S, rawBody);
      expect(receiver.verify(input(rawBody, other))).toEqual({ valid: false, reason: 'signature_mismatch' });
    });

    it('a tampered body, id or timestamp', () => {
      expect(receiver.verify(input(`${rawBody} `, good))).toMatchObject({ reason: 'signature_mismatch' });
      expect(receiver.verify(input(rawBody, { ...good, 'webhook-id': 'msg_5' }))).toMatchObject({
        reason: 'signature_mismatch',
      });
      expect(receiver.verify(input(rawBody, { ...good, 'webhook-timestamp': String(NOW_S - 1) }))).toMatchObject({
        reason: 'signature_mismatch',
      });
    });

    it('a signature too old or too new for the tolerance (300 s by default, both ways)', () => {
      const at = (seconds: number) => input(rawBody, nodeSigned(A.privateKey, 'msg_6', seconds, rawBody));
      expect(receiver.verify(at(NOW_S - 300))).toEqual({ valid: true });
      expect(receiver.verify(at(NOW_S - 301))).toEqual({ valid: false, reason: 'timestamp_out_of_tolerance' });
      expect(receiver.verify(at(NOW_S + 301))).toEqual({ valid: false, reason: 'timestamp_out_of_tolerance' });
      const strict = standardWebhooksEd25519({ publicKeys: A.whpk, toleranceSeconds: 10, now });
      expect(strict.verify(at(NOW_S - 11))).toEqual({ valid: false, reason: 'timestamp_out_of_tolerance' });
    });

    it('a header with only v1 entries, or a v1a entry of the wrong length, as malformed', () => {
      const v1Only = { ...good, 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` };
      expect(receiver.verify(input(rawBody, v1Only))).toEqual({ valid: false, reason: 'malformed_signature' });
      const short = { ...good, 'webhook-signature': `v1a,${randomBytes(63).toString('base64')}` };
      expect(receiver.verify(input(rawBody, short))).toEqual({ valid: false, reason: 'malformed_signature' });
    });

    it('a delivery without its headers', () => {
      const { 'webhook-id': _id, ...noId } = good;
      const { 'webhook-signature': _sig, ...noSignature } = good;
      expect(receiver.verify(input(rawBody, noId))).toEqual({ valid: false, reason: 'missing_id' });
      expect(receiver.verify(input(rawBody, noSignature))).toEqual({ valid: false, reason: 'missing_signature' });
    });
  });

  describe('rotation', () => {
    it('a receiver holding several public keys accepts a signature of any of them', () => {
      const receiver = standardWebhooksEd25519({ publicKeys: [A.whpk, B.whpk], now });
      for (const pair of [A, B]) {
        expect(receiver.verify(input(rawBody, nodeSigned(pair.privateKey, 'msg_7', NOW_S, rawBody)))).toEqual({
          valid: true,
        });
      }
    });

    it('a sender holding several private keys writes one v1a entry per key; either public key verifies', () => {
      const headers = standardWebhooksEd25519({ privateKeys: [B.whsk, A.whsk], now }).sign(rawBody, { msgId: 'msg_8' });
      expect(headers['webhook-signature']!.split(' ')).toEqual([
        expect.stringMatching(/^v1a,[A-Za-z0-9+/]{86}==$/),
        expect.stringMatching(/^v1a,[A-Za-z0-9+/]{86}==$/),
      ]);
      expect(standardWebhooksEd25519({ publicKeys: A.whpk, now }).verify(input(rawBody, headers))).toEqual({
        valid: true,
      });
      expect(standardWebhooksEd25519({ publicKeys: B.whpk, now }).verify(input(rawBody, headers))).toEqual({
        valid: true,
      });
      const other = ed25519KeyPair();
      expect(standardWebhooksEd25519({ publicKeys: other.whpk, now }).verify(input(rawBody, headers))).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('a header mixing v1 (the standardwebhooks library) and v1a entries verifies under both schemes', () => {
      const whsec = `whsec_${randomBytes(24).toString('base64')}`;
      const v1a = standardWebhooksEd25519({ privateKeys: A.whsk, now }).sign(rawBody, { msgId: 'msg_9' });
      const v1 = new Webhook(whsec).sign('msg_9', new Date(NOW_MS), rawBody);
      const headers = { ...v1a, 'webhook-signature': `${v1} ${v1a['webhook-signature']}` };
      expect(standardWebhooksEd25519({ publicKeys: A.whpk, now }).verify(input(rawBody, headers))).toEqual({
        valid: true,
      });
      expect(standardWebhooks({ secrets: whsec, now }).verify(input(rawBody, headers))).toEqual({ valid: true });
    });
  });

  describe('one object that signs and verifies, as the other schemes', () => {
    it('signWebhook(payload, scheme) gives a delivery its public key verifies', () => {
      const signed = signWebhook(
        createPaymentEvent('payment_intent.succeeded'),
        standardWebhooksEd25519({ privateKeys: A.whsk, now }),
      );
      expect(
        standardWebhooksEd25519({ publicKeys: A.whpk, now }).verify(input(signed.rawBody, signed.headers)),
      ).toEqual({
        valid: true,
      });
    });

    it('newSecret() is a fresh private key; withSecrets(it) signs, and verifies through its public half', () => {
      const scheme = standardWebhooksEd25519({ publicKeys: A.whpk, now });
      const secret = scheme.newSecret();
      expect(secret).toMatch(/^whsk_[A-Za-z0-9+/]{43}=$/);
      expect(secret).not.toBe(scheme.newSecret());
      const keyed = scheme.withSecrets(secret);
      const headers = keyed.sign(rawBody, { msgId: 'msg_10' });
      expect(keyed.verify(input(rawBody, headers))).toEqual({ valid: true });
      expect(scheme.verify(input(rawBody, headers))).toEqual({ valid: false, reason: 'signature_mismatch' });
    });

    it('withSecrets(public key) verifies only: signing then fails, naming privateKeys', () => {
      const verifyOnly = standardWebhooksEd25519({ privateKeys: B.whsk }).withSecrets(A.whpk, { now });
      expect(verifyOnly.verify(input(rawBody, nodeSigned(A.privateKey, 'msg_11', NOW_S, rawBody)))).toEqual({
        valid: true,
      });
      expect(() => verifyOnly.sign(rawBody)).toThrow(/standardWebhooksEd25519\(\{ privateKeys \}\)/);
    });
  });

  describe('bad options fail at boot, naming the option and the fix, never the key', () => {
    const failure = (make: () => unknown): PaymentsConfigurationError => {
      try {
        make();
      } catch (error) {
        expect(error).toBeInstanceOf(PaymentsConfigurationError);
        return error as PaymentsConfigurationError;
      }
      throw new Error('expected a PaymentsConfigurationError');
    };
    const expectNoKey = (error: PaymentsConfigurationError, ...keys: string[]) => {
      for (const key of keys) {
        const body = key.slice(5);
        expect(error.message).not.toContain(body);
        expect(JSON.stringify(error)).not.toContain(body);
        expect(inspect(error)).not.toContain(body);
      }
    };

    it('a private key given to verify', () => {
      const error = failure(() => standardWebhooksEd25519({ publicKeys: A.whsk }));
      expect(error.option).toBe('standardWebhooksEd25519({ publicKeys })');
      expect(error.message).toMatch(/private key \(whsk_\)/);
      expect(error.message).toMatch(/whpk_/);
      expectNoKey(error, A.whsk);
    });

    it('names the entry of a rotation list', () => {
      const error = failure(() => standardWebhooksEd25519({ publicKeys: [A.whpk, B.whsk] }));
      expect(error.option).toBe('standardWebhooksEd25519({ publicKeys })[1]');
      expectNoKey(error, B.whsk);
    });

    it('a symmetric whsec_ secret, a key without its prefix, bad base64 or the wrong length', () => {
      const whsec = `whsec_${randomBytes(24).toString('base64')}`;
      expect(failure(() => standardWebhooksEd25519({ publicKeys: whsec })).message).toMatch(
        /standardWebhooks\(\{ secrets \}\)/,
      );
      expect(failure(() => standardWebhooksEd25519({ publicKeys: A.whpk.slice(5) })).message).toMatch(
        /does not start with whpk_/,
      );
      expect(failure(() => standardWebhooksEd25519({ publicKeys: 'whpk_not*base64' })).message).toMatch(/32-byte/);
      const short = `whpk_${randomBytes(31).toString('base64')}`;
      expectNoKey(
        failure(() => standardWebhooksEd25519({ publicKeys: short })),
        short,
      );
      const longSeed = `whsk_${randomBytes(48).toString('base64')}`;
      expect(failure(() => standardWebhooksEd25519({ privateKeys: longSeed })).option).toBe(
        'standardWebhooksEd25519({ privateKeys })',
      );
    });

    it('a public key given to sign, and a 64-byte private key whose public half is not its own', () => {
      expect(failure(() => standardWebhooksEd25519({ privateKeys: A.whpk })).message).toMatch(/cannot sign/);
      const seed = Buffer.from(A.whsk.slice(5), 'base64');
      const mismatched = `whsk_${Buffer.concat([seed, Buffer.from(B.whpk.slice(5), 'base64')]).toString('base64')}`;
      const error = failure(() => standardWebhooksEd25519({ privateKeys: mismatched }));
      expect(error.message).toMatch(/public half/);
      expectNoKey(error, mismatched, A.whsk);
    });

    it('no key at all, a trailing newline, a negative tolerance', () => {
      expect(failure(() => standardWebhooksEd25519({})).option).toBe('standardWebhooksEd25519({ publicKeys })');
      expect(failure(() => standardWebhooksEd25519({ publicKeys: `${A.whpk}\n` })).message).toMatch(/trim/);
      expect(failure(() => standardWebhooksEd25519({ publicKeys: A.whpk, toleranceSeconds: -1 })).option).toBe(
        'standardWebhooksEd25519({ toleranceSeconds })',
      );
    });
  });
});
