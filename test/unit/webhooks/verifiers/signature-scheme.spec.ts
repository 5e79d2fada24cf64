import { describe, expect, it } from '@jest/globals';
import { hmacScheme, PaymentsConfigurationError, standardWebhooks } from '../../../../lib/index.js';
import type { KeyableSignatureScheme, WebhookSignatureScheme } from '../../../../lib/webhooks/index.js';
import { createPaymentEvent, PaymentsSimulator, signWebhook } from '../../../../lib/testing/index.js';
import { SimulatorEventsEmitter } from '../../../../lib/testing/simulator/simulator-events.emitter.js';

/*
 * A signature scheme is one object (issue 21, item 4): it verifies, signs, re-keys itself and makes
 * secrets of its own form, and the receiver, signWebhook and the simulator all use that one object.
 */
const NOW_MS = Date.parse('2026-11-24T12:00:00Z');
const NOW_S = Math.floor(NOW_MS / 1000);
const now = () => NOW_MS;
const WHSEC = `whsec_${Buffer.from('signature-scheme-test-secret-32b').toString('base64')}`;
const HEX = 'hmac-scheme-test-secret';

const schemes: Array<[string, KeyableSignatureScheme, RegExp]> = [
  ['standardWebhooks', standardWebhooks({ secrets: WHSEC, now }), /^whsec_[A-Za-z0-9+/]{32}$/],
  [
    'hmacScheme',
    hmacScheme({
      secrets: HEX,
      header: 'x-signature',
      timestampHeader: 'x-timestamp',
      signedPayload: 'timestamp.body',
      now,
    }),
    /^[0-9a-f]{64}$/,
  ],
];

const verifyOf = async (scheme: WebhookSignatureScheme, rawBody: string, headers: Record<string, string>) =>
  scheme.verify({ rawBody: Buffer.from(rawBody), headers });

describe.each(schemes)('%s', (_name, scheme, secretForm) => {
  const rawBody = JSON.stringify(createPaymentEvent('payment_intent.succeeded'));

  it('verifies what it signs, and nothing else', async () => {
    const headers = scheme.sign(rawBody, { timestamp: NOW_S, msgId: 'msg_1' });
    expect(await verifyOf(scheme, rawBody, headers)).toEqual({ valid: true });
    expect(await verifyOf(scheme, `${rawBody} `, headers)).toMatchObject({
      valid: false,
      reason: 'signature_mismatch',
    });
  });

  it('re-keyed with withSecrets, signs what only the new key verifies', async () => {
    const other = scheme.withSecrets(scheme.newSecret());
    const headers = other.sign(rawBody, { timestamp: NOW_S, msgId: 'msg_2' });
    expect(await verifyOf(other, rawBody, headers)).toEqual({ valid: true });
    expect(await verifyOf(scheme, rawBody, headers)).toMatchObject({ valid: false });
  });

  it('makes fresh secrets of its own form', () => {
    const [a, b] = [scheme.newSecret(), scheme.newSecret()];
    expect(a).toMatch(secretForm);
    expect(a).not.toBe(b);
  });

  it('is refused at creation with bad options, as its verifier is', () => {
    expect(() => scheme.withSecrets('')).toThrow(PaymentsConfigurationError);
  });
});

describe('one scheme object for signWebhook, the simulator and the receiver', () => {
  const event = createPaymentEvent('payment_intent.succeeded');

  it('signWebhook(payload, scheme) gives the headers of the older options form', () => {
    const fromScheme = signWebhook(event, standardWebhooks({ secrets: WHSEC }), { timestamp: NOW_S });
    const fromOptions = signWebhook(event, { scheme: 'standard-webhooks', secret: WHSEC, timestamp: NOW_S });
    expect(fromScheme).toEqual(fromOptions);
    expect(fromScheme.headers['webhook-id']).toBe(event.id);

    const hmac = { secrets: HEX, header: 'x-signature', prefix: 'sha256=' } as const;
    expect(signWebhook(event, hmacScheme(hmac), { timestamp: NOW_S })).toEqual(
      signWebhook(event, { scheme: 'hmac', secret: HEX, header: 'x-signature', prefix: 'sha256=', timestamp: NOW_S }),
    );
  });

  it('a simulator given a scheme object signs deliveries that its verifierFor(secret) accepts', async () => {
    const scheme = hmacScheme({ secrets: HEX, header: 'x-pay-signature', encoding: 'base64' });
    const simulator = new PaymentsSimulator({ signature: scheme, now });
    const secret = scheme.newSecret();
    const emitter = new SimulatorEventsEmitter(undefined as never, undefined as never, scheme);
    const rawBody = JSON.stringify(event);
    const headers = emitter.sign(rawBody, secret, 'msg_3', NOW_S);
    expect(Object.keys(headers)).toEqual(['content-type', 'x-pay-signature']);
    expect(await simulator.verifierFor(secret, { now }).verify({ rawBody: Buffer.from(rawBody), headers })).toEqual({
      valid: true,
    });
    expect(
      await simulator.verifierFor(scheme.newSecret(), { now }).verify({ rawBody: Buffer.from(rawBody), headers }),
    ).toMatchObject({ valid: false });
  });
});
