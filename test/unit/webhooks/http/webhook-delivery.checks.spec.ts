import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { type WebhookVerifier } from '../../../../lib/index.js';
import { type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { type WebhookVerificationResult } from '../../../../lib/webhooks/index.js';
import { WebhookRejectionException } from '../../../../lib/webhooks/receiver/webhook-rejection.exception.js';
import { WebhookDeliveryChecks } from '../../../../lib/webhooks/receiver/webhook-delivery.checks.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions, sign } from '../../../fixtures/webhooks/webhook-app.fixture.js';

const runtime: PaymentsRuntime = { now: () => 1_700_000_000_000, sleep: async () => undefined, random: () => 0.5 };

function checksWith(verifier?: WebhookVerifier): WebhookDeliveryChecks {
  const options = validatePaymentsOptions(fixtureOptions(verifier ? { verifier } : {}));
  return new WebhookDeliveryChecks(options.webhooks as Exclude<typeof options.webhooks, false>, runtime);
}

/** What `check()` left on the request: nothing, the verified delivery is its return value. */
const parked = (request: object): (string | symbol)[] => [
  ...Object.getOwnPropertySymbols(request),
  ...Object.keys(request).filter((key) => key !== 'headers' && key !== 'rawBody'),
];

function signedRequest(): { request: { headers: Record<string, string>; rawBody: Buffer }; id: string } {
  const event = createPaymentEvent('payment_intent.succeeded');
  const signed = sign(event);
  return { request: { headers: signed.headers, rawBody: Buffer.from(signed.rawBody) }, id: event.id };
}

// The checks answer synchronously when the verifier does (both built-in ones): the route then awaits no
// promise for them on every delivery. A verifier that returns a promise still works.
describe('WebhookDeliveryChecks, synchronous and asynchronous verifiers', () => {
  beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
  afterAll(() => Logger.overrideLogger(new CapturingLogger()));

  it('returns the verified event itself (not a promise) for a valid delivery and a synchronous verifier, leaving nothing on the request', () => {
    const { request, id } = signedRequest();

    const answer = checksWith().check(request);

    expect(answer).not.toBeInstanceOf(Promise);
    expect((answer as Exclude<typeof answer, PromiseLike<unknown>>).event.id).toBe(id);
    expect((answer as Exclude<typeof answer, PromiseLike<unknown>>).receivedAt).toEqual(new Date(runtime.now()));
    expect(parked(request)).toEqual([]);
  });

  it('throws the 401 rejection synchronously for a forged signature and a synchronous verifier', () => {
    const { request } = signedRequest();
    request.headers['webhook-signature'] = 'v1,' + Buffer.alloc(32).toString('base64');

    expect(() => checksWith().check(request)).toThrow(WebhookRejectionException);
    expect(parked(request)).toEqual([]);
  });

  it('returns a promise of the verified event for a verifier that answers with a promise', async () => {
    const { request, id } = signedRequest();
    const asyncVerifier: WebhookVerifier = {
      verify: async (): Promise<WebhookVerificationResult> => ({ valid: true }),
    };

    const answer = checksWith(asyncVerifier).check(request);

    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).resolves.toMatchObject({ event: { id } });
    expect(parked(request)).toEqual([]);
  });

  it('refuses with 401 when an asynchronous verifier rejects, and when a synchronous one throws', async () => {
    const rejecting: WebhookVerifier = { verify: () => Promise.reject(new Error('hsm offline')) };
    const throwing: WebhookVerifier = {
      verify: () => {
        throw new TypeError('bad header');
      },
    };

    const first = signedRequest().request;
    await expect(checksWith(rejecting).check(first)).rejects.toMatchObject({
      status: 401,
      reason: 'invalid_signature',
    });
    const second = signedRequest().request;
    expect(() => checksWith(throwing).check(second)).toThrow(WebhookRejectionException);
    expect([parked(first), parked(second)]).toEqual([[], []]);
  });

  it('refuses with 401 a verifier promise that resolves to invalid', async () => {
    const { request } = signedRequest();
    const invalid: WebhookVerifier = { verify: async () => ({ valid: false, reason: 'no matching signature' }) };

    await expect(checksWith(invalid).check(request)).rejects.toMatchObject({ status: 401 });
  });
});
