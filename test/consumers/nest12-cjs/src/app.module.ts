import { Module } from '@nestjs/common';
import { PaymentsModule, hmacVerifier } from 'nestjs-payments';
import { FulfilmentService } from './fulfilment.service.js';

/** The HMAC scheme this app was given: hex SHA-256 of the raw body in `x-signature`, prefixed `sha256=`. */
export const SCHEME = { header: 'x-signature', prefix: 'sha256=' } as const;
export const WEBHOOK_SECRET = 'consumer-nest12-cjs-endpoint-secret';

@Module({
  imports: [
    PaymentsModule.forRootAsync({
      useFactory: () => ({
        apiKey: 'sk_test_consumer_nest12_cjs',
        environment: 'sandbox',
        baseUrl: 'https://sandbox.payments.invalid',
        webhooks: { verifier: hmacVerifier({ secrets: WEBHOOK_SECRET, ...SCHEME }) },
      }),
    }),
  ],
  providers: [FulfilmentService],
})
export class AppModule {}
