import 'reflect-metadata';
import { createHmac } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import { PaymentsService } from 'nestjs-payments';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule, SCHEME, WEBHOOK_SECRET } from './app.module';
import { checkDeliveries, checkOneCopy, type SignedDelivery } from './deliveries';
import { FulfilmentService } from './fulfilment.service';
// The README's quick start as `nest build` compiled it (src/quick-start/): loading it links its imports of
// the package (`OnPaymentEvent`, `PaymentEvent`) under this Node.
import { Fulfilment } from './quick-start/fulfilment';

if (typeof Fulfilment !== 'function')
  throw new Error('the quick start handler (src/quick-start/fulfilment.ts) did not load');
console.log('[consumer] quick start: src/quick-start/fulfilment.ts built by nest build, loaded with its imports');

/** Signs as the service would, by hand (no helper of the package): HMAC of `${timestamp}.${rawBody}`. */
function sign(payload: object, secret: string): SignedDelivery {
  const rawBody = JSON.stringify(payload);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac(SCHEME.algorithm, secret).update(`${timestamp}.${rawBody}`).digest(SCHEME.encoding);
  return {
    rawBody,
    headers: { 'content-type': 'application/json', [SCHEME.header]: signature, [SCHEME.timestampHeader]: timestamp },
  };
}

async function bootstrap(): Promise<void> {
  if (typeof require !== 'function') throw new Error('this app must run as CommonJS');
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), {
    rawBody: true,
    logger: ['error', 'warn'],
  });
  await app.listen(0, '127.0.0.1');
  try {
    await checkOneCopy(app.get(PaymentsService));
    const fulfilment = app.get(FulfilmentService);
    await checkDeliveries({
      url: `${await app.getUrl()}/payments/webhooks`,
      secret: WEBHOOK_SECRET,
      otherSecret: 'another-endpoint-secret',
      sign,
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
