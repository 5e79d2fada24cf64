// The README's quick start ("Quick start: an existing Nest app"), copied into each consumer app as
// src/quick-start/ by test/consumers/run.mjs (relative imports lose their `.js` in CommonJS apps, as
// `nest new` writes them there). Kept as the README shows it.
import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { PaymentsModule, standardWebhooksVerifier, type PaymentsEnvironment } from 'nestjs-payments';
import { Fulfilment } from './fulfilment.js';

@Module({
  imports: [
    PaymentsModule.forRootAsync({
      imports: [ConfigModule.forRoot()],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        apiKey: config.getOrThrow<string>('PAYMENTS_API_KEY'),
        environment: config.get<PaymentsEnvironment>('PAYMENTS_ENVIRONMENT', 'sandbox'),
        baseUrl: config.getOrThrow<string>('PAYMENTS_BASE_URL'),
        allowInsecureHttp: config.get('PAYMENTS_ALLOW_INSECURE_HTTP') === 'true', // the local simulator only
        webhooks: {
          verifier: standardWebhooksVerifier({ secrets: config.getOrThrow<string>('PAYMENTS_WEBHOOK_SECRET') }),
        },
      }),
    }),
  ],
  providers: [Fulfilment],
})
export class AppModule {}
