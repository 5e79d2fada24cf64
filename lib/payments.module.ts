import {
  Inject,
  Logger,
  Module,
  RequestMethod,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import { DiscoveryModule, HttpAdapterHost } from '@nestjs/core';
import { PaymentsService } from './client/payments.service.js';
import { PaymentsTelemetry } from './telemetry/payments.telemetry.js';
import { PAYMENTS_RESOLVED_OPTIONS, PAYMENTS_RUNTIME, PAYMENTS_WEBHOOKS_PATH } from './payments.constants.js';
import {
  PAYMENTS_ASYNC_OPTIONS_TYPE,
  PAYMENTS_MODULE_OPTIONS,
  PAYMENTS_OPTIONS_TYPE,
  PaymentsConfigurableModule,
} from './payments.module-definition.js';
import type { PaymentsModuleOptions, ResolvedPaymentsOptions } from './payments-options.interface.js';
import { validatePaymentsOptions } from './payments-options.validator.js';
import { PaymentEventsProcessor } from './webhooks/payment-events-processor.interface.js';
import { PaymentEventsDispatcher } from './webhooks/payment-events.dispatcher.js';
import { PaymentEventsRegistry } from './webhooks/payment-events.registry.js';
import { createPaymentsWebhookController } from './webhooks/payments-webhook.controller.js';
import { PAYMENTS_WEBHOOKS_LOGGER } from './webhooks/payments-webhooks.messages.js';
import { createWebhookProviders, normaliseWebhooksPath, webhooksPathOf } from './webhooks/payments-webhooks.providers.js';
import { PaymentEventsQueue } from './webhooks/queue/payment-events.queue.js';
import { IdempotencyStore } from './webhooks/stores/idempotency-store.interface.js';
import { WebhookRawBodyMiddleware } from './webhooks/webhook-raw-body.middleware.js';

const coreProviders: Provider[] = [
  {
    provide: PAYMENTS_RESOLVED_OPTIONS,
    useFactory: (options: PaymentsModuleOptions) => validatePaymentsOptions(options),
    inject: [PAYMENTS_MODULE_OPTIONS],
  },
  {
    provide: PAYMENTS_RUNTIME,
    useFactory: (options: ResolvedPaymentsOptions) => options.runtime,
    inject: [PAYMENTS_RESOLVED_OPTIONS],
  },
  // Loads the optional @opentelemetry/api once at boot; a no-op telemetry when it is not installed.
  { provide: PaymentsTelemetry, useFactory: () => PaymentsTelemetry.load() },
  PaymentsService,
];

/**
 * The payments module: the API client (`PaymentsService`) and, unless `webhooks: false`, the webhook
 * receiver that routes verified events to `@OnPaymentEvent` handlers. Global by default.
 *
 * @example
 * PaymentsModule.forRoot({ apiKey, environment: 'sandbox', baseUrl, webhooks: { verifier } })
 */
@Module({
  imports: [DiscoveryModule],
  providers: coreProviders,
  exports: [
    PaymentsService,
    PaymentsTelemetry,
    PAYMENTS_RESOLVED_OPTIONS,
    PAYMENTS_RUNTIME,
    PaymentEventsRegistry,
    PaymentEventsDispatcher,
    PaymentEventsProcessor,
    PaymentEventsQueue,
    IdempotencyStore,
  ],
})
export class PaymentsModule extends PaymentsConfigurableModule implements NestModule, OnApplicationShutdown {
  private readonly logger = new Logger(PAYMENTS_WEBHOOKS_LOGGER);

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_PATH) private readonly webhooksPath: string | false,
    @Inject(PAYMENTS_RESOLVED_OPTIONS) private readonly options: ResolvedPaymentsOptions,
    @Inject(IdempotencyStore) private readonly store: IdempotencyStore,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    super();
  }

  /**
   * `forRoot`: the webhook route is `webhooks.path` (default 'payments/webhooks'); `webhooks: false`
   * registers none.
   */
  static override forRoot(options: typeof PAYMENTS_OPTIONS_TYPE): DynamicModule {
    return withWebhooks(super.forRoot(options), webhooksPathOf(options));
  }

  /**
   * `forRootAsync`: the route must be known before the factory runs, so it is the static
   * `webhooksPath` (default 'payments/webhooks'; `false` registers none). The boot fails if the
   * factory's `webhooks.path` names another one; if the factory returns `webhooks: false` while a
   * route is registered, that route answers 404.
   */
  static override forRootAsync(options: typeof PAYMENTS_ASYNC_OPTIONS_TYPE): DynamicModule {
    const path = options.webhooksPath === false ? false : normaliseWebhooksPath(options.webhooksPath);
    return withWebhooks(super.forRootAsync(options), path);
  }

  /**
   * Express apps created with `bodyParser: false` get the raw body from the module's middleware on
   * POST {path}. Not on Fastify, where middleware runs before body parsing (use `rawBody: true`).
   */
  configure(consumer: MiddlewareConsumer): void {
    if (this.webhooksPath === false) return;
    if (this.adapterHost.httpAdapter?.getType() !== 'express') return;
    consumer.apply(WebhookRawBodyMiddleware).forRoutes({ path: this.webhooksPath, method: RequestMethod.POST });
  }

  /** Closes the idempotency store if the module created it (a store passed in options belongs to the app). */
  async onApplicationShutdown(): Promise<void> {
    const given = this.options.webhooks ? this.options.webhooks.store : undefined;
    if (this.store === given) return;
    try {
      await this.store.close?.();
    } catch (error) {
      this.logger.warn(`Could not close the idempotency store: ${error instanceof Error ? error.message : typeof error}`);
    }
  }
}

function withWebhooks(definition: DynamicModule, path: string | false): DynamicModule {
  return {
    ...definition,
    controllers: [...(definition.controllers ?? []), ...(path === false ? [] : [createPaymentsWebhookController(path)])],
    providers: [...(definition.providers ?? []), ...createWebhookProviders(path)],
  };
}
