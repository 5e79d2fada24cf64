import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { PaymentsModuleOptions } from './payments-options.interface.js';
import type { PaymentsReceiverPlugins } from './webhooks/contracts/payments-webhooks.options.js';

/**
 * The structure of a receiver declared in `forRootAsync({ receiver })`, known before any factory runs:
 * its route, its processing, and the plug-ins its options may turn on (`reconcile`, `transactions`:
 * only the declared ones have providers; see `PaymentsReceiverPlugins`).
 */
export interface PaymentsReceiverStructure extends PaymentsReceiverPlugins {
  /** The route. Default 'payments/webhooks'. */
  path?: string;
  /** `'inline'` (default): handlers run before the answer; `'queue'`: the factory's `webhooks.processing.queue`. */
  processing?: 'inline' | 'queue';
  /** With `processing: 'queue'`: whether this process runs a worker. Default: the factory's `processing.queue.worker`. */
  worker?: boolean;
}

/** Static extras of `forRoot` / `forRootAsync`, known before any factory runs. */
export interface PaymentsModuleExtras {
  /** Register the module globally. Default true. */
  isGlobal?: boolean;
  /**
   * `forRootAsync` only: the receiver's structure, which Nest must know before the options factory
   * runs (as `PaymentsWebhooksModule.registerAsync` declares it): `{ path, processing, worker,
   * reconcile, transactions }` (each optional: 'payments/webhooks', `'inline'`, a worker, and the
   * plug-ins the factory may turn on), or `false` for no receiver (the factory then need not return
   * `webhooks` at all; register it with `PaymentsWebhooksModule` or not at all). The factory returns
   * the values (`webhooks: { verifier, store, ... }`); a factory that names another route or
   * processing, or turns on a plug-in not declared, fails the boot. Without `processing` the receiver
   * is inline; without the plug-in flags, reconciliation is registered and the inbox is not. `forRoot`
   * reads all of it from `webhooks`.
   */
  receiver?: false | PaymentsReceiverStructure;
  /**
   * The instance name (`forRoot({ name: 'eu', ... })`, `forRootAsync({ name: 'eu', ... })`): an app
   * may import several instances, each with its own key, base address, route, verifier, store
   * namespace and queue. Inject a named instance's client with `@InjectPaymentsService('eu')`; bind
   * a handler with `@OnPaymentEvent(type, { instance: 'eu' })`. Default: the unnamed instance ('default').
   */
  name?: string;
}

export const {
  ConfigurableModuleClass: PaymentsConfigurableModule,
  MODULE_OPTIONS_TOKEN: PAYMENTS_MODULE_OPTIONS,
  OPTIONS_TYPE: PAYMENTS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: PAYMENTS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<PaymentsModuleOptions>({ moduleName: 'Payments' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createPaymentsOptions')
  .setExtras<PaymentsModuleExtras>({ isGlobal: true, receiver: undefined, name: undefined }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal !== false,
  }))
  .build();
