import { Module } from '@nestjs/common';
import { PaymentsModule, hmacVerifier } from 'nestjs-payments';
import { FulfilmentService } from './fulfilment.service';

/** The HMAC scheme this app was given: hex SHA-256 of the raw body in `x-signature`, prefixed `sha256=`. */
export const SCHEME = { header: 'x-signature', prefix: 'sha256=' } as const;
export const WEBHOOK_SECRET = 'consumer-nest12-cjs-endpoint-secret';

@Module({
  imports: [
    PaymentsModule.forRootAsync({
      useFactory: () => ({
        apiKey: process.env.PAYMENTS_API_KEY!, // test/consumers/run.mjs: a key of its simulator
        environment: 'sandbox',
        baseUrl: process.env.PAYMENTS_BASE_URL!,
        allowInsecureHttp: true, // the local simulator speaks plain http
        webhooks: { verifier: hmacVerifier({ secrets: WEBHOOK_SECRET, ...SCHEME }) },
      }),
    }),
  ],
  providers: [FulfilmentService],
})
export class AppModule {}
