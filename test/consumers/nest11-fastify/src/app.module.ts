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
        apiKey: process.env.PAYMENTS_API_KEY!, // test/consumers/run.mjs: a key of its simulator
        environment: 'sandbox' as const,
        baseUrl: process.env.PAYMENTS_BASE_URL!,
        allowInsecureHttp: true, // the local simulator speaks plain http
        webhooks: { verifier: hmacVerifier({ secrets: WEBHOOK_SECRET, ...SCHEME }) },
      }),
    }),
  ],
  providers: [FulfilmentService],
})
export class AppModule {}
