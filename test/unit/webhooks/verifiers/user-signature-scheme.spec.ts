import 'reflect-metadata';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  OnPaymentEvent,
  PaymentsConfigurationError,
  PaymentsModule,
  type PaymentEvent,
  type WebhookSignatureScheme,
} from '../../../../lib/index.js';
import { PaymentsWebhookReceiver } from '../../../../lib/webhooks/index.js';
import { createPaymentEvent, PaymentsSimulator, signWebhook } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

/*
 * A scheme is `name`, `sign` and `verify` (issue 41, item 4): a user's own scheme with those three
 * members only is a verifier of the receiver and a signer of signWebhook. Only the simulator needs more
 * (`withSecrets`, `newSecret`: a KeyableSignatureScheme), and it says so when they are missing.
 */
const SECRET = 'acme-endpoint-secret';
const HEADER = 'x-acme-signature';

/** The scheme an app might write for a provider the library does not know: HMAC-SHA256 of the body, hex. */
function acmeScheme(secret: string): WebhookSignatureScheme {
  const digest = (rawBody: Buffer | string) => createHmac('sha256', secret).update(rawBody).digest();
  return {
    name: 'acme',
    sign: (rawBody) => ({ [HEADER]: `sha256=${digest(rawBody).toString('hex')}` }),
    verify: ({ rawBody, headers }) => {
      const given = headers[HEADER];
      if (typeof given !== 'string' || !given.startsWith('sha256=')) {
        return { valid: false, reason: 'missing_signature' };
      }
      const signature = Buffer.from(given.slice('sha256='.length), 'hex');
      const expected = digest(rawBody);
      return signature.length === expected.length && timingSafeEqual(signature, expected)
        ? { valid: true }
        : { valid: false, reason: 'signature_mismatch' };
    },
  };
}

const scheme = acmeScheme(SECRET);
const runs: string[] = [];

@Injectable()
class Fulfilment {
  @OnPaymentEvent('payment_intent.succeeded')
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    runs.push(event.id);
  }
}

const logger = new CapturingLogger();
let receiver: PaymentsWebhookReceiver;
let close: () => Promise<void>;

beforeAll(async () => {
  Logger.overrideLogger(logger);
  @Module({
    imports: [PaymentsModule.forRoot(fixtureOptions({ verifier: scheme }))],
    providers: [Fulfilment],
  })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger });
  receiver = app.get(PaymentsWebhookReceiver);
  close = () => app.close();
});
afterAll(async () => {
  await close();
  Logger.overrideLogger(new CapturingLogger());
});

describe("a user's scheme of three members (name, sign, verify)", () => {
  it('has no other member: nothing keyable about it', () => {
    expect(Object.keys(scheme).sort()).toEqual(['name', 'sign', 'verify']);
  });

  it('signWebhook(payload, scheme) signs with it: the body as sent, its header, and the content type', () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const signed = signWebhook(event, scheme);

    expect(signed.rawBody).toBe(JSON.stringify(event));
    expect(signed.headers).toEqual({
      'content-type': 'application/json',
      [HEADER]: `sha256=${createHmac('sha256', SECRET).update(signed.rawBody).digest('hex')}`,
    });
  });

  it('is the verifier of webhooks.verifier: a delivery it signed is handled, once; another key is refused 401', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const signed = signWebhook(event, scheme);

    expect(await receiver.receive({ body: Buffer.from(signed.rawBody), headers: signed.headers })).toMatchObject({
      status: 200,
      outcome: 'handled',
    });
    expect(runs).toEqual([event.id]);

    const foreign = signWebhook(createPaymentEvent('payment_intent.succeeded'), acmeScheme('another-secret'));
    expect(await receiver.receive({ body: foreign.rawBody, headers: foreign.headers })).toMatchObject({
      status: 401,
      retry: false,
    });
    expect(runs).toEqual([event.id]);
  });
});

describe('the simulator, given a scheme it cannot key', () => {
  it('throws a PaymentsConfigurationError naming PaymentsSimulator({ signature }), the missing members and the fix', () => {
    // @ts-expect-error The simulator's signature option takes a KeyableSignatureScheme (withSecrets, newSecret).
    const make = () => new PaymentsSimulator({ signature: scheme });

    expect(make).toThrow(PaymentsConfigurationError);
    let error: unknown;
    try {
      make();
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({ option: 'PaymentsSimulator({ signature })' });
    const { message } = error as Error;
    expect(message).toContain("signature scheme 'acme' without withSecrets and newSecret");
    expect(message).toContain('KeyableSignatureScheme');
    expect(message).toContain('standardWebhooks(...)');
  });
});
