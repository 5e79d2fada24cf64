import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import {
  OnPaymentEvent,
  PaymentsConfigurationError,
  PaymentsModule,
  PaymentsService,
  standardWebhooks,
  type PaymentEvent,
  type PaymentsEnvironment,
} from '../../../lib/index.js';
import { createPaymentEvent, PaymentsSimulator, signWebhook } from '../../../lib/testing/index.js';

// The README's quick start (and docs/configuration.md's `@nestjs/config` recipe), kept runnable. The
// only change: ConfigModule ignores any .env file of the checkout, so the tests own the environment.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const VARIABLES = [
  'PAYMENTS_API_KEY',
  'PAYMENTS_ENVIRONMENT',
  'PAYMENTS_BASE_URL',
  'PAYMENTS_ALLOW_INSECURE_HTTP',
  'PAYMENTS_WEBHOOK_SECRET',
] as const;

@Injectable()
class Fulfilment {
  readonly paid: string[] = []; // paid intents: your orders service in a real app
  @OnPaymentEvent('payment_intent.succeeded')
  onPaid(event: PaymentEvent<'payment_intent.succeeded'>) {
    const intentId = event.data.payment_intent?.id;
    if (intentId) this.paid.push(intentId);
  }
}

@Module({
  imports: [
    PaymentsModule.forRootAsync({
      imports: [ConfigModule.forRoot({ ignoreEnvFile: true })],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        apiKey: config.getOrThrow<string>('PAYMENTS_API_KEY'),
        environment: config.get<PaymentsEnvironment>('PAYMENTS_ENVIRONMENT', 'sandbox'),
        baseUrl: config.getOrThrow<string>('PAYMENTS_BASE_URL'),
        allowInsecureHttp: config.get('PAYMENTS_ALLOW_INSECURE_HTTP') === 'true', // the local simulator only
        webhooks: {
          verifier: standardWebhooks({ secrets: config.getOrThrow<string>('PAYMENTS_WEBHOOK_SECRET') }),
        },
      }),
    }),
  ],
  providers: [Fulfilment],
})
class AppModule {}

describe('README quick start', () => {
  const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
  const opened: Array<{ close(): Promise<unknown> }> = [];

  afterEach(async () => {
    for (const resource of opened.splice(0).reverse()) await resource.close();
    for (const name of VARIABLES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('with no .env at all, the first error names PAYMENTS_API_KEY, not the verifier secrets', async () => {
    for (const name of VARIABLES) delete process.env[name];
    const boot = Test.createTestingModule({ imports: [AppModule] }).compile();
    await expect(boot).rejects.toThrow('PAYMENTS_API_KEY');
    await expect(boot).rejects.not.toThrow(/secret/i);
  });

  it('a key that is set but malformed fails at boot with PaymentsConfigurationError naming apiKey', async () => {
    Object.assign(process.env, {
      PAYMENTS_API_KEY: 'sk_test_quick_start\n', // a trailing newline, as an env file can leave it
      PAYMENTS_BASE_URL: 'https://sandbox.payments.invalid',
      PAYMENTS_WEBHOOK_SECRET: SECRET,
    });
    const error: unknown = await Test.createTestingModule({ imports: [AppModule] })
      .compile()
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    expect(error).toMatchObject({ option: 'apiKey' });
    expect(String((error as Error).message)).not.toContain('sk_test_quick_start');
  });

  it('against the simulator (allowInsecureHttp): the client creates an intent, and a signed delivery runs the handler once', async () => {
    const sim = new PaymentsSimulator({ apiKeys: ['sk_test_sim'] });
    Object.assign(process.env, {
      PAYMENTS_API_KEY: 'sk_test_sim',
      PAYMENTS_BASE_URL: await sim.start(),
      PAYMENTS_ALLOW_INSECURE_HTTP: 'true',
      PAYMENTS_WEBHOOK_SECRET: SECRET,
    });
    opened.push({ close: () => sim.stop() });
    const app: INestApplication = (
      await Test.createTestingModule({ imports: [AppModule] }).compile()
    ).createNestApplication({ rawBody: true });
    await app.listen(0, '127.0.0.1');
    opened.push(app);

    const intent = await app.get(PaymentsService).paymentIntents.create({ amount: 1500 });
    expect(intent.state).toBe('requires_payment_method');

    const event = createPaymentEvent('payment_intent.succeeded');
    const { rawBody, headers } = signWebhook(event, { scheme: 'standard-webhooks', secret: SECRET });
    const url = `${await app.getUrl()}/payments/webhooks`;
    const first = await fetch(url, { method: 'POST', headers, body: rawBody });
    const again = await fetch(url, { method: 'POST', headers, body: rawBody }); // a redelivery
    expect([first.status, await first.json()]).toEqual([200, { received: true, outcome: 'handled' }]);
    expect([again.status, await again.json()]).toEqual([200, { received: true, outcome: 'duplicate' }]);
    expect(app.get(Fulfilment).paid).toEqual([event.data.payment_intent?.id]);
  });
});
