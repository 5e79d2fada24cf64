import { Module } from '@nestjs/common';
import { PaymentsModule, hmacVerifier } from 'nestjs-payments';
import { FulfilmentService } from './fulfilment.service';

/** The HMAC scheme this app was given: base64 SHA-512 of `${timestamp}.${rawBody}`, timestamp in its own header. */
export const SCHEME = {
  header: 'x-payments-signature',
  algorithm: 'sha512',
  encoding: 'base64',
  timestampHeader: 'x-payments-timestamp',
  signedPayload: 'timestamp.body',
} as const;
export const WEBHOOK_SECRET = 'consumer-nest11-fastify-endpoint-secret';

@Module({
  imports: [
    PaymentsModule.forRootAsync({
      useFactory: () => ({
        apiKey: 'sk_test_consumer_nest11_fastify',
        environment: 'sandbox' as const,
        baseUrl: 'https://sandbox.payments.invalid',
        webhooks: { verifier: hmacVerifier({ secrets: WEBHOOK_SECRET, ...SCHEME }) },
      }),
    }),
  ],
  providers: [FulfilmentService],
})
export class AppModule {}
