import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { PaymentsService } from 'nestjs-payments';
import { signWebhook } from 'nestjs-payments/testing';
import { AppModule, WEBHOOK_SECRET } from './app.module.js';
import { checkDeliveries, checkOneCopy } from './deliveries.js';
import { FulfilmentService } from './fulfilment.service.js';

const app = await NestFactory.create(AppModule, { rawBody: true, logger: ['error', 'warn'] });
await app.listen(0, '127.0.0.1');
try {
  await checkOneCopy(app.get(PaymentsService));
  const fulfilment = app.get(FulfilmentService);
  await checkDeliveries({
    url: `${await app.getUrl()}/payments/webhooks`,
    secret: WEBHOOK_SECRET,
    otherSecret: 'whsec_TIUAdVN/RrY7k05K5DpAEUykDmjSXmq8',
    sign: (payload, secret) => signWebhook(payload, { scheme: 'standard-webhooks', secret }),
    runs: () => fulfilment.runs,
    payments: app.get(PaymentsService),
  });
} finally {
  await app.close();
}
