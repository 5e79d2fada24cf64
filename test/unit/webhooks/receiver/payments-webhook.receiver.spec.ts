import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OnPaymentEvent, PaymentsModule, type PaymentEvent } from '../../../../lib/index.js';
import {
  getPaymentsWebhookReceiverToken,
  PaymentsWebhookReceiver,
  type PaymentRejectionRecord,
  type PaymentsWebhookReceipt,
} from '../../../../lib/webhooks/index.js';
import { shouldRetry } from '../../../../lib/webhooks/receiver/webhook-receipts.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions, sign } from '../../../fixtures/webhooks/webhook-app.fixture.js';

const runs: string[] = [];
const rejections: PaymentRejectionRecord[] = [];

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
    imports: [
      PaymentsModule.forRoot({
        ...fixtureOptions({ requireHttps: true, deliveryListener: { onRejection: (r) => rejections.push(r) } }),
      }),
    ],
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

describe('PaymentsWebhookReceiver.receive: the answer table as values, below HTTP', () => {
  it('answers a signed delivery at once (no promise with the memory store), handled then duplicate, the handler run once', () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const signed = sign(event);

    const first = receiver.receive({ body: Buffer.from(signed.rawBody), headers: signed.headers });
    const again = receiver.receive({ body: new Uint8Array(Buffer.from(signed.rawBody)), headers: signed.headers });

    expect(first).not.toBeInstanceOf(Promise);
    expect(first).toEqual({
      received: true,
      status: 200,
      outcome: 'handled',
      retry: false,
      body: { received: true, outcome: 'handled' },
    } satisfies PaymentsWebhookReceipt);
    expect(again).toMatchObject({ status: 200, outcome: 'duplicate', retry: false });
    expect(runs.filter((id) => id === event.id)).toEqual([event.id]);
  });

  it('reads header names in any case, as a function event or a broker may carry them', () => {
    const signed = sign(createPaymentEvent('payment_intent.succeeded'));
    const upper = Object.fromEntries(
      Object.entries(signed.headers).map(([name, value]) => [name.toUpperCase(), value]),
    );

    expect(receiver.receive({ body: signed.rawBody, headers: upper })).toMatchObject({
      status: 200,
      outcome: 'handled',
    });
  });

  it('[W1] refuses a forged delivery 401 (no retry), and names the signature headers a delivery lacks', () => {
    const signed = sign(createPaymentEvent('payment_intent.succeeded'));

    const forged = receiver.receive({
      body: signed.rawBody,
      headers: { ...signed.headers, 'webhook-signature': 'v1,AAAA' },
    });
    const bare = receiver.receive({ body: signed.rawBody, headers: { 'webhook-id': signed.headers['webhook-id']! } });

    expect(forged).toEqual({
      received: false,
      status: 401,
      outcome: 'refused',
      retry: false,
      error: 'invalid_signature',
      body: { received: false, error: 'invalid_signature' },
    });
    expect(bare).toMatchObject({
      status: 401,
      error: 'invalid_signature',
      missingHeaders: ['webhook-timestamp', 'webhook-signature'],
    });
    expect(rejections.slice(-2).map((r) => r.reason)).toEqual(['invalid_signature', 'invalid_signature']);
  });

  it('judges HTTPS only when told the delivery came over plain HTTP (requireHttps on): 403', () => {
    const signed = sign(createPaymentEvent('payment_intent.succeeded'));

    expect(receiver.receive({ body: signed.rawBody, headers: signed.headers, secure: false })).toMatchObject({
      status: 403,
      error: 'https_required',
      retry: false,
    });
  });

  it('says whether to retry from the status alone, so an outcome added later is answered right', () => {
    expect([200, 202, 400, 401, 403, 404, 413, 415].map(shouldRetry)).toEqual(Array(8).fill(false));
    expect([408, 409, 429, 500, 503].map(shouldRetry)).toEqual(Array(5).fill(true));
  });

  it('is exported per instance: the class for the unnamed one, a string token for a named one', () => {
    expect(getPaymentsWebhookReceiverToken()).toBe(PaymentsWebhookReceiver);
    expect(getPaymentsWebhookReceiverToken('eu')).toBe('nestjs-payments:eu:PaymentsWebhookReceiver');
  });
});
