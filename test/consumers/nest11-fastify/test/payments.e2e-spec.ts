// The payments e2e test, beside `nest new`'s own (test/app.e2e-spec.ts), run as `nest new` v11 sets it up (Jest + ts-jest, CommonJS, test/jest-e2e.json),
// on Fastify: the real AppModule against the package's simulator, and a delivery signed by hand
// (node:crypto, the app's HMAC scheme) posted to its route.
import { createHmac } from 'node:crypto';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { PaymentsService } from 'nestjs-payments';
import { createPaymentEvent, PaymentsSimulator } from 'nestjs-payments/testing';
import { AppModule, SCHEME, WEBHOOK_SECRET } from './../src/app.module';
import { FulfilmentService } from './../src/fulfilment.service';

function sign(payload: object, secret: string) {
  const rawBody = JSON.stringify(payload);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac(SCHEME.algorithm, secret).update(`${timestamp}.${rawBody}`).digest(SCHEME.encoding);
  const headers = {
    'content-type': 'application/json',
    [SCHEME.header]: signature,
    [SCHEME.timestampHeader]: timestamp,
  };
  return { rawBody, headers };
}

describe('payments (e2e, Fastify)', () => {
  const sim = new PaymentsSimulator({ apiKeys: ['sk_test_e2e'] });
  let app: NestFastifyApplication;

  beforeAll(async () => {
    Object.assign(process.env, { PAYMENTS_API_KEY: 'sk_test_e2e', PAYMENTS_BASE_URL: await sim.start() });
    const moduleFixture = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleFixture.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { rawBody: true });
    await app.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    await app?.close();
    await sim.stop();
  });

  it('POST /payments/webhooks: a signed delivery is handled once, its redelivery is a duplicate, a forged one is refused', async () => {
    const url = `${await app.getUrl()}/payments/webhooks`;
    const post = async ({ rawBody, headers }: ReturnType<typeof sign>) => {
      const response = await fetch(url, { method: 'POST', headers, body: rawBody });
      return [response.status, await response.json()];
    };
    const delivery = sign(createPaymentEvent('payment_intent.succeeded'), WEBHOOK_SECRET);
    expect(await post(delivery)).toEqual([200, { received: true, outcome: 'handled' }]);
    expect(await post(delivery)).toEqual([200, { received: true, outcome: 'duplicate' }]);
    const forged = sign(createPaymentEvent('payment_intent.succeeded'), 'another-endpoint-secret');
    expect(await post(forged)).toEqual([401, expect.objectContaining({ error: 'invalid_signature' })]);
    expect(app.get(FulfilmentService).runs).toBe(1);
  });

  it('one copy of the package under Jest: the service the app injects is the class this test imports', async () => {
    const service = app.get(PaymentsService); // throws if the app registered another copy's token
    expect(service).toBeInstanceOf(PaymentsService);
    expect((await service.paymentIntents.create({ amount: 1500 })).state).toBe('requires_payment_method');
  });
});
