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
  /**
   * The instance name (`forRoot({ name: 'eu', ... })`, `forRootAsync({ name: 'eu', ... })`): an app
   * may import several instances, each with its own key, base address, route, verifier, store
   * namespace and queue. Inject a named instance's client with `@InjectPaymentsService('eu')`; bind
   * a handler with `@OnPaymentEvent(type, { name: 'eu' })`. Default: the unnamed instance ('default').
   */
  name?: string;
  /**
   * `forRootAsync` only: whether `webhooks.processing` will be `'inline'` or `{ queue }`, so that the
   * queue part is registered only when used. When omitted, both are registered and the factory's
   * options decide (as before). `forRoot` reads `webhooks.processing` instead.
   */
  webhooksProcessing?: 'inline' | 'queue';
}

export const {
  ConfigurableModuleClass: PaymentsConfigurableModule,
  MODULE_OPTIONS_TOKEN: PAYMENTS_MODULE_OPTIONS,
  OPTIONS_TYPE: PAYMENTS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PAYMENTS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PaymentsModuleOptions>({ moduleName: 'Payments' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createPaymentsOptions')
  .setExtras<PaymentsModuleExtras>(
    { isGlobal: true, webhooksPath: undefined, name: undefined, webhooksProcessing: undefined },
    (definition, extras) => ({
      ...definition,
      global: extras.isGlobal !== false,
    }),
  )
  .build();
