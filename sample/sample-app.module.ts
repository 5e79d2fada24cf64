import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { PaymentDeliveryJournal, PaymentsModule, type PaymentsModuleOptions } from '../lib/index.js';
import { AdminModule } from './admin/admin.module.js';
import { CheckoutModule } from './checkout/checkout.module.js';
import { OrdersModule } from './orders/orders.module.js';
import { PaymentMethodsModule } from './payment-methods/payment-methods.module.js';
import { sampleConfig, type SampleConfig } from './sample.config.js';
import { SampleWebhooksModule } from './webhooks/sample-webhooks.module.js';
import { SAMPLE_WEBHOOKS_PATH, WebhookEndpointRegistrar } from './webhooks/webhook-endpoint.registrar.js';
import { WebhookSecretsHolder } from './webhooks/webhook-secrets.holder.js';

/** ioredis connection options from a `redis://[:password@]host[:port][/db]` address. */
function redisOptions(url: string): {
  host: string;
  port: number;
  db: number;
  password?: string;
  tls?: object;
  maxRetriesPerRequest: null;
} {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    db: Number(parsed.pathname.slice(1) || 0),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ workers need it.
    maxRetriesPerRequest: null,
  };
}

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
    const env = options.env ?? process.env;
    // Queued processing is structure, declared before the factory runs: on when SAMPLE_QUEUE_REDIS_URL is
    // set (sampleConfig checks its value at boot, as the factory's queue options repeat it).
    const processing = env['SAMPLE_QUEUE_REDIS_URL'] ? 'queue' : 'inline';
    return {
      module: SampleAppModule,
      imports: [
        ConfigModule.forRoot({ isGlobal: true, ignoreEnvFile: true, load: [sampleConfig(env)] }),
        SampleWebhooksModule,
        PaymentsModule.forRootAsync({
          imports: [SampleWebhooksModule],
          inject: [ConfigService, WebhookSecretsHolder, PaymentDeliveryJournal],
          // Nest must know the route, the processing and which plug-ins the factory turns on before the
          // factory runs (the factory repeats the route): reconciliation, no transactional inbox.
          receiver: { path: SAMPLE_WEBHOOKS_PATH, processing, reconcile: true },
          useFactory: (
            config: ConfigService,
            secrets: WebhookSecretsHolder,
            journal: PaymentDeliveryJournal,
          ): PaymentsModuleOptions => {
            const payments = config.getOrThrow<SampleConfig['payments']>('sample.payments');
            const queue = config.get<SampleConfig['queue']>('sample.queue');
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
                // Recent deliveries and handler runs for the operator view (/admin).
                deliveryListener: journal,
                // An order whose webhook never comes is settled from a retrieve of its intent, through
                // the same handlers, once (docs/reconciliation.md). First check a minute after creation.
                reconcile: { afterSeconds: config.getOrThrow<number>('sample.reconcileAfterSeconds') },
                // The embedded default: inline processing, in-memory idempotency store. With
                // SAMPLE_QUEUE_REDIS_URL: BullMQ, whose failed set /admin shows and replays.
                ...(queue === undefined
                  ? {}
                  : {
                      processing: {
                        queue: {
                          connection: redisOptions(queue.redisUrl),
                          name: queue.name,
                          attempts: queue.attempts,
                          backoff: { type: 'fixed', delay: 500 },
                        },
                      },
                    }),
              },
            };
          },
        }),
        CheckoutModule,
        OrdersModule,
        PaymentMethodsModule,
        AdminModule,
      ],
      providers: [WebhookEndpointRegistrar],
    };
  }
}
