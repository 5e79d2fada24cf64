import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { PaymentsService } from 'nestjs-payments';
import { signWebhook } from 'nestjs-payments/testing';
import { AppModule, SCHEME, WEBHOOK_SECRET } from './app.module';
import { checkDeliveries, checkOneCopy } from './deliveries';
import { FulfilmentService } from './fulfilment.service';
// The README's quick start as `nest build` compiled it (src/quick-start/): loading it links its imports of
// the package (`OnPaymentEvent`, `PaymentEvent`) under this Node.
import { Fulfilment } from './quick-start/fulfilment';

if (typeof Fulfilment !== 'function')
  throw new Error('the quick start handler (src/quick-start/fulfilment.ts) did not load');
console.log('[consumer] quick start: src/quick-start/fulfilment.ts built by nest build, loaded with its imports');

async function bootstrap(): Promise<void> {
  if (typeof require !== 'function') throw new Error('this app must run as CommonJS');
  const app = await NestFactory.create(AppModule, { rawBody: true, logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  try {
    await checkOneCopy(app.get(PaymentsService));
    const fulfilment = app.get(FulfilmentService);
    await checkDeliveries({
      url: `${await app.getUrl()}/payments/webhooks`,
      secret: WEBHOOK_SECRET,
      otherSecret: 'another-endpoint-secret',
      sign: (payload, secret) => signWebhook(payload, { scheme: 'hmac', secret, ...SCHEME }),
      runs: () => fulfilment.runs,
      payments: app.get(PaymentsService),
    });
  } finally {
    await app.close();
  }
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
