import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { AppController } from './app.controller';
import { AppService } from './app.service';
import { PaymentsModule, hmacVerifier } from 'nestjs-payments';
import { FulfilmentService } from './fulfilment.service';

/** The HMAC scheme this app was given: hex SHA-256 of the raw body in `x-signature`, prefixed `sha256=`. */
export const SCHEME = { header: 'x-signature', prefix: 'sha256=' } as const;
export const WEBHOOK_SECRET = 'consumer-nest12-cjs-endpoint-secret';

@Module({
  imports: [
    PaymentsModule.forRootAsync({
      imports: [ConfigModule.forRoot()],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        apiKey: config.getOrThrow<string>('PAYMENTS_API_KEY'), // run.mjs: a key of its simulator; tests: test/setup-env.ts
        environment: 'sandbox',
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
