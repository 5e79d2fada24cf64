// The README's handler test (fulfilment.spec.ts) on Fastify: the app is created with
// `new FastifyAdapter()`, as the README's main.ts comment says; the rest is the README's lines
// (test/consumers/shared/quick-start/fulfilment.spec.ts).
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { createPaymentEvent, PaymentsSimulator, signWebhook } from 'nestjs-payments/testing';
import { AppModule } from './app.module';
import { Fulfilment } from './fulfilment';

it('runs the handler once per event', async () => {
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'; // any whsec_ + base64 value
  const sim = new PaymentsSimulator({ apiKeys: ['sk_test_sim'] }); // plain http on 127.0.0.1
  Object.assign(process.env, {
    PAYMENTS_API_KEY: 'sk_test_sim',
    PAYMENTS_BASE_URL: await sim.start(),
    PAYMENTS_ALLOW_INSECURE_HTTP: 'true',
    PAYMENTS_WEBHOOK_SECRET: SECRET,
  });
  const app = (
    await Test.createTestingModule({ imports: [AppModule] }).compile()
  ).createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { rawBody: true });
  await app.listen(0, '127.0.0.1');

  const { data } = sim.emit('payment_intent.succeeded'); // an intent the service holds as succeeded
  const event = createPaymentEvent('payment_intent.succeeded', { data });
  const { rawBody, headers } = signWebhook(event, { scheme: 'standard-webhooks', secret: SECRET });
  const url = `${await app.getUrl()}/payments/webhooks`;
  expect((await fetch(url, { method: 'POST', headers, body: rawBody })).status).toBe(200); // handled
  expect((await fetch(url, { method: 'POST', headers, body: rawBody })).status).toBe(200); // duplicate
  expect(app.get(Fulfilment).paid).toEqual([event.data.payment_intent?.id]); // ran once
  await app.close();
  await sim.stop();
});
