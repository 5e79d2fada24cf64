import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { AppController } from './app.controller';
import { AppService } from './app.service';
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
      imports: [ConfigModule.forRoot()],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        apiKey: config.getOrThrow<string>('PAYMENTS_API_KEY'), // run.mjs: a key of its simulator; tests: test/setup-env.ts
        environment: 'sandbox' as const,
        baseUrl: config.getOrThrow<string>('PAYMENTS_BASE_URL'),
        allowInsecureHttp: true, // the local simulator speaks plain http
        webhooks: { verifier: hmacVerifier({ secrets: WEBHOOK_SECRET, ...SCHEME }) },
      }),
    }),
  ],
  controllers: [AppController],
  providers: [AppService, FulfilmentService],
})
export class AppModule {}
