// The payments e2e test, beside `nest new`'s own (test/app.e2e-spec.ts), run as `nest new --type cjs` v12 sets it up (Jest + ts-jest, CommonJS,
// test/jest-e2e.json): the real AppModule against the package's simulator, and a delivery signed with
// the app's HMAC scheme posted to its route.
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { PaymentsService } from 'nestjs-payments';
import { createPaymentEvent, PaymentsSimulator, signWebhook } from 'nestjs-payments/testing';
import { AppModule, SCHEME, WEBHOOK_SECRET } from './../src/app.module';
import { FulfilmentService } from './../src/fulfilment.service';

describe('payments (e2e)', () => {
  const sim = new PaymentsSimulator({ apiKeys: ['sk_test_e2e'] });
  let app: INestApplication;

  beforeAll(async () => {
    Object.assign(process.env, { PAYMENTS_API_KEY: 'sk_test_e2e', PAYMENTS_BASE_URL: await sim.start() });
    const moduleFixture = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleFixture.createNestApplication({ rawBody: true });
    await app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await app?.close();
    await sim.stop();
  });

  it('POST /payments/webhooks: a signed delivery is handled once, its redelivery is a duplicate, a forged one is refused', async () => {
    const url = `${await app.getUrl()}/payments/webhooks`;
    const post = async ({ rawBody, headers }: { rawBody: string; headers: Record<string, string> }) => {
      const response = await fetch(url, { method: 'POST', headers, body: rawBody });
      return [response.status, await response.json()];
    };
    const sign = (secret: string) =>
      signWebhook(createPaymentEvent('payment_intent.succeeded'), { scheme: 'hmac', secret, ...SCHEME });
    const delivery = sign(WEBHOOK_SECRET);
    expect(await post(delivery)).toEqual([200, { received: true, outcome: 'handled' }]);
    expect(await post(delivery)).toEqual([200, { received: true, outcome: 'duplicate' }]);
    expect(await post(sign('another-endpoint-secret'))).toEqual([
      401,
      expect.objectContaining({ error: 'invalid_signature' }),
    ]);
    expect(app.get(FulfilmentService).runs).toBe(1);
  });

  it('one copy of the package under Jest: the service the app injects is the class this test imports', async () => {
    const service = app.get(PaymentsService); // throws if the app registered another copy's token
    expect(service).toBeInstanceOf(PaymentsService);
    expect((await service.paymentIntents.create({ amount: 1500 })).state).toBe('requires_payment_method');
  });
});
