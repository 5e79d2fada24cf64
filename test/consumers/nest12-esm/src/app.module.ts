import { Module } from '@nestjs/common';
import { AppController } from './app.controller.js';
import { AppService } from './app.service.js';
import { PaymentsModule, standardWebhooksVerifier } from 'nestjs-payments';
import { FulfilmentService } from './fulfilment.service.js';

export const WEBHOOK_SECRET = 'whsec_eNZ0Uguzj56ZxIoXeUZM0XtQ1pw7XHjo';

@Module({
  imports: [
    PaymentsModule.forRoot({
      apiKey: process.env.PAYMENTS_API_KEY!, // test/consumers/run.mjs: a key of its simulator
      environment: 'sandbox',
      baseUrl: process.env.PAYMENTS_BASE_URL!,
      allowInsecureHttp: true, // the local simulator speaks plain http
      webhooks: { verifier: standardWebhooksVerifier({ secrets: WEBHOOK_SECRET }) },
    }),
  ],
  controllers: [AppController],
  providers: [AppService, FulfilmentService],
})
export class AppModule {}
