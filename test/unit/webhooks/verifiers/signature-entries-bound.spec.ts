import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type * as NodeCrypto from 'node:crypto';

/*
 * An unsigned request must not buy more verification work than a signed one: the number of signature
 * entries a scheme checks is bounded (MAX_SIGNATURE_ENTRIES), whatever the header holds. The crypto
 * primitives are counted by wrapping node:crypto (each call goes through to the real one), never timed.
 */
const calls = { verify: 0, createHmac: 0, timingSafeEqual: 0 };
jest.unstable_mockModule('node:crypto', () => {
  const actual = jest.requireActual<typeof NodeCrypto>('node:crypto');
  const counted = {
    ...actual,
    verify: ((...args: Parameters<typeof actual.verify>) => {
      calls.verify += 1;
      return actual.verify(...args);
    }) as typeof actual.verify,
    createHmac: ((...args: Parameters<typeof actual.createHmac>) => {
      calls.createHmac += 1;
      return actual.createHmac(...args);
    }) as typeof actual.createHmac,
    timingSafeEqual: ((...args: Parameters<typeof actual.timingSafeEqual>) => {
      calls.timingSafeEqual += 1;
      return actual.timingSafeEqual(...args);
    }) as typeof actual.timingSafeEqual,
  };
  return { ...counted, default: counted };
});

const { Injectable } = await import('@nestjs/common');
const { Test } = await import('@nestjs/testing');
const { OnPaymentEvent, PaymentsModule, hmacScheme, standardWebhooks } = await import('../../../../lib/index.js');
const { standardWebhooksEd25519 } = await import('../../../../lib/webhooks/index.js');
const { MAX_SIGNATURE_ENTRIES } = await import('../../../../lib/webhooks/verifiers/signature-compare.util.js');
const { createPaymentEvent } = await import('../../../../lib/testing/index.js');
const { ed25519KeyPair } = await import('../../../fixtures/webhooks/ed25519-keys.js');

const NOW_MS = Date.parse('2026-11-24T12:00:00Z');
const now = () => NOW_MS;
const whsec = (label: string) => `whsec_${Buffer.from(label.padEnd(32, '.')).toString('base64')}`;
const rawBody = JSON.stringify(createPaymentEvent('payment_intent.succeeded'));
const bytes = (length: number, fill: number) => Buffer.alloc(length, fill).toString('base64');

/** `count` wrong entries of `version` (signatures of the right length), then `last` if given. */
function signatureHeader(version: string, length: number, count: number, last?: string): string {
  const entries = Array.from({ length: count }, (_, index) => `${version},${bytes(length, index + 1)}`);
  return [...entries, ...(last === undefined ? [] : [last])].join(' ');
}

const reset = () => {
  calls.verify = calls.createHmac = calls.timingSafeEqual = 0;
};
beforeEach(reset);

it('the bound is a handful: enough for a rotation, far below what a header can hold', () => {
  expect(MAX_SIGNATURE_ENTRIES).toBe(8);
});

describe('standardWebhooks (v1, HMAC): a header with more than 8 v1 entries', () => {
  const receiver = standardWebhooks({ secrets: [whsec('current'), whsec('previous')], now });
  const signed = receiver.sign(rawBody, { msgId: 'msg_bound' });
  const withSignature = (value: string) => ({
    rawBody: Buffer.from(rawBody),
    headers: { ...signed, 'webhook-signature': value },
  });

  it.each([9, 50, 170])('is refused as invalid without any digest computed or compared (%i entries)', (count) => {
    const result = receiver.verify(withSignature(signatureHeader('v1', 32, count - 1, signed['webhook-signature'])));
    expect(result).toEqual({ valid: false, reason: 'too_many_signatures' });
    expect(calls).toEqual({ verify: 0, createHmac: 0, timingSafeEqual: 0 });
  });

  it('8 entries with the valid one last still verify (rotation), compared in constant time', () => {
    const result = receiver.verify(withSignature(signatureHeader('v1', 32, 7, signed['webhook-signature'])));
    expect(result).toEqual({ valid: true });
    expect(calls.createHmac).toBe(1);
    expect(calls.timingSafeEqual).toBe(8);
  });

  it('8 wrong entries cost at most 8 comparisons per secret, and entries of other versions none', () => {
    const mixed = `${signatureHeader('v1', 32, 8)} ${signatureHeader('v1a', 64, 40)} junk v2,abc`;
    expect(receiver.verify(withSignature(mixed))).toEqual({ valid: false, reason: 'signature_mismatch' });
    expect(calls.createHmac).toBe(2);
    expect(calls.timingSafeEqual).toBe(16);
  });
});

describe('standardWebhooksEd25519 (v1a): a header with more than 8 v1a entries', () => {
  const current = ed25519KeyPair();
  const previous = ed25519KeyPair();
  const receiver = standardWebhooksEd25519({ publicKeys: [current.whpk, previous.whpk], now });
  const signed = standardWebhooksEd25519({ privateKeys: current.whsk, now }).sign(rawBody, { msgId: 'msg_bound' });
  const withSignature = (value: string) => ({
    rawBody: Buffer.from(rawBody),
    headers: { ...signed, 'webhook-signature': value },
  });

  it.each([9, 50, 170])('is refused as invalid without any Ed25519 verification (%i entries)', (count) => {
    const result = receiver.verify(withSignature(signatureHeader('v1a', 64, count - 1, signed['webhook-signature'])));
    expect(result).toEqual({ valid: false, reason: 'too_many_signatures' });
    expect(calls.verify).toBe(0);
  });

  it('8 entries with the valid one last still verify (rotation)', () => {
    const result = receiver.verify(withSignature(signatureHeader('v1a', 64, 7, signed['webhook-signature'])));
    expect(result).toEqual({ valid: true });
    expect(calls.verify).toBeLessThanOrEqual(8);
  });

  it('8 wrong entries cost at most 8 verifications per key, and v1 entries none', () => {
    const mixed = `${signatureHeader('v1a', 64, 8)} ${signatureHeader('v1', 32, 40)}`;
    expect(receiver.verify(withSignature(mixed))).toEqual({ valid: false, reason: 'signature_mismatch' });
    expect(calls.verify).toBe(16);
  });
});

describe('hmacScheme: more than 8 values of its header', () => {
  const receiver = hmacScheme({ secrets: ['first-secret', 'second-secret'], header: 'x-signature', now });
  const signed = receiver.sign(rawBody);
  const withValues = (values: string[]) => ({ rawBody: Buffer.from(rawBody), headers: { 'x-signature': values } });
  const wrong = (count: number) => Array.from({ length: count }, (_, index) => bytes(32, index + 1));

  it.each([9, 170])('are refused as invalid without any digest computed or compared (%i values)', (count) => {
    const result = receiver.verify(withValues([...wrong(count - 1), signed['x-signature']!]));
    expect(result).toEqual({ valid: false, reason: 'too_many_signatures' });
    expect(calls).toEqual({ verify: 0, createHmac: 0, timingSafeEqual: 0 });
  });

  it('8 values with the valid one last still verify, compared in constant time', () => {
    const hex = (value: string) => Buffer.from(value, 'base64').toString('hex');
    const result = receiver.verify(withValues([...wrong(7).map(hex), signed['x-signature']!]));
    expect(result).toEqual({ valid: true });
    expect(calls.timingSafeEqual).toBe(8);
  });
});

describe('through the receiver', () => {
  const secret = whsec('receiver');
  const scheme = standardWebhooks({ secrets: secret });
  const runs: string[] = [];

  @Injectable()
  class Fulfilment {
    @OnPaymentEvent('payment_intent.succeeded')
    paid(event: { id: string }): void {
      runs.push(event.id);
    }
  }

  let app: Awaited<ReturnType<typeof boot>>;
  const boot = async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiKey: 'sk_test_signature_entries',
          environment: 'sandbox',
          baseUrl: 'https://sandbox.payments.invalid',
          webhooks: { verifier: scheme },
        }),
      ],
      providers: [Fulfilment],
    }).compile();
    const nest = moduleRef.createNestApplication({ rawBody: true, logger: false });
    await nest.listen(0, '127.0.0.1');
    return nest;
  };
  beforeAll(async () => {
    app = await boot();
  });
  afterAll(() => app.close());

  it('[W5] answers 401 to a delivery whose valid signature hides behind 169 others, and runs nothing', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const body = JSON.stringify(event);
    const headers = scheme.sign(body);
    headers['webhook-signature'] = signatureHeader('v1', 32, 169, headers['webhook-signature']);
    const response = await fetch(`${await app.getUrl()}/payments/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ received: false, error: 'invalid_signature' });
    expect(runs).toEqual([]);
  });
});
