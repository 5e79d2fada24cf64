import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OnPaymentEvent, PaymentsModule, standardWebhooksVerifier, type PaymentEvent } from '../../../lib/index.js';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';

// A merchant handler tested with signWebhook + createPaymentEvent (docs/testing.md's own block runs from the page: test/unit/docs/testing-doc.spec.ts).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

@Injectable()
class Fulfilment {
  readonly paid: string[] = [];
  @OnPaymentEvent('payment_intent.succeeded')
  onPaid(event: PaymentEvent<'payment_intent.succeeded'>) {
    this.paid.push(event.data.payment_intent!.id);
  }
}

describe('README example: a merchant handler tested with signWebhook + createPaymentEvent', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentsModule.forRoot({
          apiKey: 'sk_test_unused',
          environment: 'sandbox',
          baseUrl: 'https://sandbox.payments.invalid',
          webhooks: { verifier: standardWebhooksVerifier({ secrets: SECRET }) },
        }),
      ],
      providers: [Fulfilment],
    }).compile();
    app = moduleRef.createNestApplication({ rawBody: true });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/payments/webhooks`;
  });
  afterAll(() => app.close());

  it('[W5] runs the handler for a signed delivery', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const { rawBody, headers } = signWebhook(event, { scheme: 'standard-webhooks', secret: SECRET });
    const res = await fetch(url, { method: 'POST', headers, body: rawBody });
    expect(res.status).toBe(200);
    expect(app.get(Fulfilment).paid).toEqual([event.data.payment_intent!.id]);
  });

  it('[W5] answers 401 to a delivery signed with another secret, and the handler does not run', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    const { rawBody, headers } = signWebhook(event, {
      scheme: 'standard-webhooks',
      secret: 'whsec_' + Buffer.from('x'.repeat(32)).toString('base64'),
    });
    const res = await fetch(url, { method: 'POST', headers, body: rawBody });
    expect(res.status).toBe(401);
    expect(app.get(Fulfilment).paid).not.toContain(event.data.payment_intent!.id);
  });
});
