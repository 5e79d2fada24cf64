// app.module.ts
import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { PaymentsEnvironment, PaymentsModule, standardWebhooks } from 'nestjs-payments';
import { Fulfilment } from './fulfilment';

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
        webhooks: { verifier: standardWebhooks({ secrets: config.getOrThrow<string>('PAYMENTS_WEBHOOK_SECRET') }) },
      }),
    }),
  ],
  providers: [Fulfilment],
})
export class AppModule {}
