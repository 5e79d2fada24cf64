import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { PaymentsModule, type PaymentsModuleOptions } from '../lib/index.js';
import { CheckoutModule } from './checkout/checkout.module.js';
import { OrdersModule } from './orders/orders.module.js';
import { PaymentMethodsModule } from './payment-methods/payment-methods.module.js';
import { sampleConfig, type SampleConfig } from './sample.config.js';
import { SampleWebhooksModule } from './webhooks/sample-webhooks.module.js';
import { SAMPLE_WEBHOOKS_PATH, WebhookEndpointRegistrar } from './webhooks/webhook-endpoint.registrar.js';
import { WebhookSecretsHolder } from './webhooks/webhook-secrets.holder.js';

/** Options of `SampleAppModule.forRoot`. */
export interface SampleAppOptions {
  /** Where the settings come from. Default `process.env` (see `readSampleConfig` for the variables). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The sample merchant app: the checkout page, orders and payment-method setups, wired to the
 * payment service by `PaymentsModule.forRootAsync` with settings from `ConfigModule`. The app must
 * be created with `rawBody: true` so the receiver verifies signatures over the exact bytes.
 *
 * @example
 * const app = await NestFactory.create(SampleAppModule.forRoot(), { rawBody: true });
 */
@Module({})
export class SampleAppModule {
  static forRoot(options: SampleAppOptions = {}): DynamicModule {
    return {
      module: SampleAppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [sampleConfig(options.env ?? process.env)] }),
        SampleWebhooksModule,
        PaymentsModule.forRootAsync({
          imports: [SampleWebhooksModule],
          inject: [ConfigService, WebhookSecretsHolder],
          // Nest must know the route before the factory runs; the factory repeats it.
          webhooksPath: SAMPLE_WEBHOOKS_PATH,
          useFactory: (config: ConfigService, secrets: WebhookSecretsHolder): PaymentsModuleOptions => {
            const payments = config.getOrThrow<SampleConfig['payments']>('sample.payments');
            return {
              apiKey: payments.apiKey,
              environment: payments.environment,
              baseUrl: payments.baseUrl,
              allowInsecureHttp: payments.allowInsecureHttp,
              webhooks: {
                path: SAMPLE_WEBHOOKS_PATH,
                // Delegates to standardWebhooksVerifier / hmacVerifier once the endpoint secret is
                // known (see WebhookSecretsHolder for why it cannot be built right here).
                verifier: secrets.verifier,
                // The embedded default: inline processing, in-memory idempotency store.
              },
            };
          },
        }),
        CheckoutModule,
        OrdersModule,
        PaymentMethodsModule,
      ],
      providers: [WebhookEndpointRegistrar],
    };
  }
}
