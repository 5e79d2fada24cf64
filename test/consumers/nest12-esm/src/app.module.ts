import { Module } from '@nestjs/common';
import { PaymentsModule, standardWebhooksVerifier } from 'nestjs-payments';
import { FulfilmentService } from './fulfilment.service.js';

export const WEBHOOK_SECRET = 'whsec_eNZ0Uguzj56ZxIoXeUZM0XtQ1pw7XHjo';

@Module({
  imports: [
    PaymentsModule.forRoot({
      apiKey: 'sk_test_consumer_nest12_esm',
      environment: 'sandbox',
      baseUrl: 'https://sandbox.payments.invalid',
      webhooks: { verifier: standardWebhooksVerifier({ secrets: WEBHOOK_SECRET }) },
    }),
  ],
  providers: [FulfilmentService],
})
export class AppModule {}
