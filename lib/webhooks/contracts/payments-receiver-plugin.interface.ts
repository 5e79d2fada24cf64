import type { DynamicModule, ForwardReference, InjectionToken, Provider, Type } from '@nestjs/common';
import type { PaymentsDispatchPlugin } from './dispatch-plugin.interface.js';

/**
 * The receiver's resolved options as a plug-in's `hooks` get them: a `ResolvedWebhooksOptions` (of
 * `nestjs-payments/webhooks`), which also holds the value each plug-in turned on by a value reads
 * (`webhooks[option]`).
 */
export interface PaymentsPluginReceiverOptions {
  /** The named instance's name; absent for the unnamed one. */
  readonly instance?: string;
  /** The prefix of the instance's keys in a shared store. */
  readonly storeKeyPrefix: string;
}

/** Where a built-in plug-in's value (`webhooks.<option>`) is checked: the receiver it belongs to. */
export interface PaymentsPluginOptionContext {
  /** The receiver's instance (`'default'` when unnamed). */
  readonly instance: string;
  readonly environment: 'sandbox' | 'production';
}

/**
 * A plug-in of the receiver, as one object (as a nestjs-cls plug-in is): its name, the Nest imports,
 * providers and exports it brings, and the hooks it adds to the delivery path (`PaymentsDispatchPlugin`:
 * around a handler call, at a completion, after a dispatch, after the answer, after a reconciliation).
 * The receiver names no plug-in: it registers what each brings and calls the hooks. A new plug-in is one
 * folder that exports a factory of this object; the app passes it in `plugins`.
 *
 * @example
 * PaymentsWebhooksModule.register({ verifier, plugins: [auditPlugin({ table: 'audit' })] })
 * PaymentsModule.forRoot({ ..., webhooks: { verifier, plugins: [auditPlugin()] } })
 */
export interface PaymentsReceiverPlugin {
  /** A short name, unique per receiver: in log lines and errors. */
  readonly name: string;
  /** Modules the plug-in's providers need (e.g. a `ConfigModule`). */
  readonly imports?: ReadonlyArray<Type<unknown> | DynamicModule | Promise<DynamicModule> | ForwardReference>;
  /** Providers registered in the receiver's module, beside the receiver's own (they can inject them). */
  readonly providers?: readonly Provider[];
  /**
   * Tokens of `providers` the receiver's module exports. Two instances that export one class token make
   * it ambiguous: a plug-in of a named instance exports tokens of its own (as `getPaymentEventsQueueToken(name)`).
   */
  readonly exports?: readonly InjectionToken[];
  /**
   * A provider of `providers` that processes each verified event instead of the inline processor (a
   * `PaymentEventsProcessor`: the queue enqueues it, and the receiver answers once it is enqueued). At
   * most one plug-in of a receiver has one.
   */
  readonly processor?: InjectionToken;
  /**
   * The plug-in's hooks, built once at boot from the receiver's resolved options and the providers named
   * in `inject`; undefined when the options leave the plug-in with nothing to do.
   */
  readonly hooks?: {
    readonly inject?: readonly InjectionToken[];
    useFactory(webhooks: PaymentsPluginReceiverOptions, ...dependencies: never[]): PaymentsDispatchPlugin | undefined;
  };
}
