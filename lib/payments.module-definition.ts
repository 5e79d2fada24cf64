import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { PaymentsModuleOptions } from './payments-options.interface.js';

/** Static extras of `forRoot` / `forRootAsync`, known before any factory runs. */
export interface PaymentsModuleExtras {
  /** Register the module globally. Default true. */
  isGlobal?: boolean;
  /**
   * `forRootAsync` only: the webhook route, which Nest must know before the options factory runs.
   * Default 'payments/webhooks'; `false` registers no route. `forRoot` reads `webhooks.path` instead.
   */
  webhooksPath?: string | false;
}

export const {
  ConfigurableModuleClass: PaymentsConfigurableModule,
  MODULE_OPTIONS_TOKEN: PAYMENTS_MODULE_OPTIONS,
  OPTIONS_TYPE: PAYMENTS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PAYMENTS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PaymentsModuleOptions>({ moduleName: 'Payments' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createPaymentsOptions')
  .setExtras<PaymentsModuleExtras>({ isGlobal: true, webhooksPath: undefined }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal !== false,
  }))
  .build();
