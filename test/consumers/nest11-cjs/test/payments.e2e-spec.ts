// The payments e2e test, beside `nest new`'s own (test/app.e2e-spec.ts), run as `nest new` v11 sets it up (Jest + ts-jest, CommonJS, test/jest-e2e.json):
// the real AppModule against the package's simulator, and a signed delivery posted to its route.
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { PaymentsService } from 'nestjs-payments';
import { createPaymentEvent, PaymentsSimulator, signWebhook } from 'nestjs-payments/testing';
import type * as AppModuleFile from './../src/app.module';
import { FulfilmentService } from './../src/fulfilment.service';

describe('payments (e2e)', () => {
  const sim = new PaymentsSimulator({ apiKeys: ['sk_test_e2e'] });
  let app: INestApplication;
  let secret: string;

  beforeAll(async () => {
    // AppModule reads its options from the environment when it is loaded (forRoot): load it after.
    Object.assign(process.env, { PAYMENTS_API_KEY: 'sk_test_e2e', PAYMENTS_BASE_URL: await sim.start() });
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS app, loading after the env is set
    const { AppModule, WEBHOOK_SECRET } = require('./../src/app.module') as typeof AppModuleFile;
    secret = WEBHOOK_SECRET;
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
    const event = createPaymentEvent('payment_intent.succeeded');
    const { rawBody, headers } = signWebhook(event, { scheme: 'standard-webhooks', secret });
    const post = async (body: string, signed: Record<string, string>) => {
      const response = await fetch(url, { method: 'POST', headers: signed, body });
      return [response.status, await response.json()];
    };
    expect(await post(rawBody, headers)).toEqual([200, { received: true, outcome: 'handled' }]);
    expect(await post(rawBody, headers)).toEqual([200, { received: true, outcome: 'duplicate' }]);
    const forged = signWebhook(createPaymentEvent('payment_intent.succeeded'), {
      scheme: 'standard-webhooks',
      secret: 'whsec_TIUAdVN/RrY7k05K5DpAEUykDmjSXmq8',
    });
    expect(await post(forged.rawBody, forged.headers)).toEqual([
      401,
      expect.objectContaining({ error: 'invalid_signature' }),
    ]);
    expect(app.get(FulfilmentService).runs).toBe(1);
  });

  it('one copy of the package under Jest: the service the app injects is the class this test imports', async () => {
    const service = app.get(PaymentsService); // throws if the app registered another copy's token
    expect(service).toBeInstanceOf(PaymentsService);
    const intent = await service.paymentIntents.create({ amount: 1500 });
    expect(intent.state).toBe('requires_payment_method');
  });
});
