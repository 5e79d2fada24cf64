import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { PaymentsService } from './client/payments.service.js';
import { PAYMENTS_RESOLVED_OPTIONS, PAYMENTS_RUNTIME } from './payments.constants.js';
import {
  PAYMENTS_ASYNC_OPTIONS_TYPE,
  PAYMENTS_MODULE_OPTIONS,
  PAYMENTS_OPTIONS_TYPE,
  PaymentsConfigurableModule,
} from './payments.module-definition.js';
import type { PaymentsModuleOptions, ResolvedPaymentsOptions } from './payments-options.interface.js';
import { validatePaymentsOptions } from './payments-options.validator.js';

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
  providers: coreProviders,
  exports: [PaymentsService, PAYMENTS_RESOLVED_OPTIONS, PAYMENTS_RUNTIME],
})
export class PaymentsModule extends PaymentsConfigurableModule {
  static override forRoot(options: typeof PAYMENTS_OPTIONS_TYPE): DynamicModule {
    return super.forRoot(options);
  }

  static override forRootAsync(options: typeof PAYMENTS_ASYNC_OPTIONS_TYPE): DynamicModule {
    return super.forRootAsync(options);
  }
}
