import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger, type ExecutionContext } from '@nestjs/common';
import { type WebhookVerifier } from '../../../../lib/index.js';
import { type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { type WebhookVerificationResult } from '../../../../lib/webhooks/index.js';
import { WebhookRejectionException } from '../../../../lib/webhooks/http/webhook-rejection.exception.js';
import {
  WebhookDeliveryChecks,
  getVerifiedWebhookDelivery,
} from '../../../../lib/webhooks/http/webhook-delivery.checks.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions, sign } from '../../../fixtures/webhooks/webhook-app.fixture.js';

const runtime: PaymentsRuntime = { now: () => 1_700_000_000_000, sleep: async () => undefined, random: () => 0.5 };

function guardWith(verifier?: WebhookVerifier): WebhookDeliveryChecks {
  const options = validatePaymentsOptions(fixtureOptions(verifier ? { verifier } : {}));
  return new WebhookDeliveryChecks(options.webhooks as Exclude<typeof options.webhooks, false>, runtime);
}

function contextOf(request: object): ExecutionContext {
  return { switchToHttp: () => ({ getRequest: () => request }) } as unknown as ExecutionContext;
}

function signedRequest(): { request: { headers: Record<string, string>; rawBody: Buffer }; id: string } {
  const event = createPaymentEvent('payment_intent.succeeded');
  const signed = sign(event);
  return { request: { headers: signed.headers, rawBody: Buffer.from(signed.rawBody) }, id: event.id };
}

// The guard answers synchronously when the verifier does (both built-in ones): Nest then awaits no
// promise for it on every delivery (issue 15). A verifier that returns a promise still works.
describe('WebhookDeliveryChecks, synchronous and asynchronous verifiers', () => {
  beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
  afterAll(() => Logger.overrideLogger(new CapturingLogger()));

  it('returns true itself (not a promise) for a valid delivery and a synchronous verifier, and leaves the event on the request', () => {
    const { request, id } = signedRequest();

    const answer = guardWith().canActivate(contextOf(request));

    expect(answer).toBe(true);
    expect(getVerifiedWebhookDelivery(request)?.event.id).toBe(id);
  });

  it('throws the 401 rejection synchronously for a forged signature and a synchronous verifier', () => {
    const { request } = signedRequest();
    request.headers['webhook-signature'] = 'v1,' + Buffer.alloc(32).toString('base64');

    expect(() => guardWith().canActivate(contextOf(request))).toThrow(WebhookRejectionException);
    expect(getVerifiedWebhookDelivery(request)).toBeUndefined();
  });

  it('returns a promise of true for a verifier that answers with a promise', async () => {
    const { request, id } = signedRequest();
    const asyncVerifier: WebhookVerifier = {
      verify: async (): Promise<WebhookVerificationResult> => ({ valid: true }),
    };

    const answer = guardWith(asyncVerifier).canActivate(contextOf(request));

    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).resolves.toBe(true);
    expect(getVerifiedWebhookDelivery(request)?.event.id).toBe(id);
  });

  it('refuses with 401 when an asynchronous verifier rejects, and when a synchronous one throws', async () => {
    const rejecting: WebhookVerifier = { verify: () => Promise.reject(new Error('hsm offline')) };
    const throwing: WebhookVerifier = {
      verify: () => {
        throw new TypeError('bad header');
      },
    };

    const first = signedRequest().request;
    await expect(guardWith(rejecting).canActivate(contextOf(first))).rejects.toMatchObject({
      status: 401,
      reason: 'invalid_signature',
    });
    const second = signedRequest().request;
    expect(() => guardWith(throwing).canActivate(contextOf(second))).toThrow(WebhookRejectionException);
    expect([getVerifiedWebhookDelivery(first), getVerifiedWebhookDelivery(second)]).toEqual([undefined, undefined]);
  });

  it('refuses with 401 a verifier promise that resolves to invalid', async () => {
    const { request } = signedRequest();
    const invalid: WebhookVerifier = { verify: async () => ({ valid: false, reason: 'no matching signature' }) };

    await expect(guardWith(invalid).canActivate(contextOf(request))).rejects.toMatchObject({ status: 401 });
  });
});
