import type { InjectionToken, Provider } from '@nestjs/common';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../core/payments.runtime.js';
import { PaymentsConfigurationError } from '../errors/payments.errors.js';
import { PAYMENTS_DISPATCH_PLUGINS, type PaymentsDispatchPlugin } from './contracts/dispatch-plugin.interface.js';
import { IdempotencyStore } from './contracts/idempotency-store.interface.js';
import { IntentWatchStore } from './contracts/intent-watch-store.interface.js';
import type { ResolvedPaymentsReconcileOptions } from './contracts/payments-reconcile.options.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from './contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from './contracts/payments-webhooks.options.js';
import { webhooksLogger } from './log/receiver.logger.js';
import { TransactionalHandlersCheck } from './support/transactional-handlers.check.js';
import { DeliveryListenerPlugin } from './journal/delivery-listener.plugin.js';
import { PaymentsReconciler } from './reconcile/payments-reconciler.js';
import { WatchListSettlement } from './reconcile/watch-list.settlement.js';
import { pacingOf } from './reconcile/reconcile-batch.js';
import { MemoryIntentWatchStore } from './stores/memory-intent-watch.store.js';
import { PaymentsInbox } from './transactional/payments-inbox.js';

/** The plug-ins whose providers a receiver registers, by the option that turns each on. */
export type ReceiverPluginName = 'transactions' | 'reconcile';

/**
 * Which plug-ins' providers a receiver registers: `true` registered, `false` not. `undefined` (the
 * deprecated mode of `forRootAsync` / `registerAsync` without the flags) registers them, and the options
 * the factory returns decide at boot whether they do anything.
 */
export type ReceiverPluginsSpec = Record<ReceiverPluginName, boolean | undefined>;

const PLUGIN_NAMES: readonly ReceiverPluginName[] = ['transactions', 'reconcile'];

/** Whether a `webhooks.<plug-in>` value turns the plug-in on (`false` and a missing value do not). */
const isOn = (value: unknown): boolean => value !== undefined && value !== false;

/**
 * `forRoot` / `register`: the values are known when the module is built, so the plug-ins whose option is
 * set; reconciliation is on unless `webhooks.reconcile` is `false` (it does nothing without a client).
 */
export function receiverPluginsOf(webhooks: unknown): ReceiverPluginsSpec {
  const raw = typeof webhooks === 'object' && webhooks !== null ? (webhooks as Record<string, unknown>) : {};
  return { transactions: isOn(raw['transactions']), reconcile: raw['reconcile'] !== false };
}

/**
 * `forRootAsync` / `registerAsync`: the flags declared beside the structure. Giving either declares both
 * (one left out is `false`); giving neither is the deprecated mode (both registered). `option(name)`
 * names a flag in the error of a value that is not a boolean.
 */
export function declaredReceiverPlugins(
  flags: Partial<Record<ReceiverPluginName, unknown>>,
  option: (name: ReceiverPluginName) => string,
): ReceiverPluginsSpec {
  if (flags.transactions === undefined && flags.reconcile === undefined) {
    return { transactions: undefined, reconcile: undefined };
  }
  for (const name of PLUGIN_NAMES) {
    const value = flags[name];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new PaymentsConfigurationError(
        option(name),
        `must be a boolean, got ${value === null ? 'null' : typeof value}`,
        `pass ${name}: true when the options factory may set webhooks.${name}, false (or leave it out) otherwise`,
      );
    }
  }
  // Reconciliation is on by default: its providers are registered unless declared false.
  return { transactions: flags.transactions === true, reconcile: flags.reconcile !== false };
}

/** How the errors of one registration name a plug-in's flag, its value and the fix. */
export interface ReceiverPluginsNaming {
  /** The flag, e.g. `receiver.reconcile`. */
  option(name: ReceiverPluginName): string;
  /** The value that turned the plug-in on, e.g. `webhooks.reconcile`. */
  value(name: ReceiverPluginName): string;
  fix(name: ReceiverPluginName): string;
}

/**
 * Fails the boot when the factory's options turn on a plug-in whose providers were not registered
 * (declared `false`), naming the flag and the fix. Reconciliation left on by default where its
 * providers were declared out (`receiver: { reconcile: false }`) is off: the options then say so.
 */
export function checkReceiverPlugins(
  spec: ReceiverPluginsSpec,
  webhooks: ResolvedWebhooksOptions,
  naming: ReceiverPluginsNaming,
): ResolvedWebhooksOptions {
  if (spec.reconcile === false && webhooks.reconcile?.byDefault === true) {
    webhooks = Object.freeze({ ...webhooks, reconcile: undefined });
  }
  for (const name of PLUGIN_NAMES) {
    if (spec[name] !== false || webhooks[name] === undefined) continue;
    throw new PaymentsConfigurationError(
      naming.option(name),
      `is not declared, but the options factory sets ${naming.value(name)} (a plug-in's providers are registered before the factory runs)`,
      naming.fix(name),
    );
  }
  return webhooks;
}

/** The reconciler's watch list: the option's, else one in the idempotency store's engine, else in memory. */
export function intentWatchStoreFor(
  reconcile: ResolvedPaymentsReconcileOptions,
  store: IdempotencyStore,
  runtime: PaymentsRuntime,
  instance?: string,
): IntentWatchStore {
  if (reconcile.store) return reconcile.store;
  if (typeof store.intentWatchStore === 'function') return store.intentWatchStore(instance);
  return new MemoryIntentWatchStore({ now: runtime });
}

/**
 * The providers of the plug-ins `spec` registers, and the dispatcher's list of their hooks
 * (`PAYMENTS_DISPATCH_PLUGINS`): the transactional inbox (`PaymentsInbox`), reconciliation (its watch
 * list and `PaymentsReconciler`, exported by the unnamed instance). A receiver without the inbox keeps
 * its one check of the handlers (`TransactionalHandlersCheck`). The delivery listener is a value of the
 * options and needs no provider.
 */
export function createReceiverPluginsPart(
  spec: ReceiverPluginsSpec,
  unnamed: boolean,
): { providers: Provider[]; exports: InjectionToken[] } {
  const inbox = spec.transactions !== false;
  const reconcile = spec.reconcile !== false;
  const providers: Provider[] = [
    inbox ? PaymentsInbox : TransactionalHandlersCheck,
    {
      // The dispatcher's plug-ins, for the options in use (the dispatcher imports none of them).
      provide: PAYMENTS_DISPATCH_PLUGINS,
      useFactory: (webhooks: ResolvedWebhooksOptions, ...parts: unknown[]) =>
        dispatchPluginsOf(webhooks, {
          inbox: inbox ? (parts.shift() as PaymentsInbox) : undefined,
          watchList: reconcile ? (parts.shift() as IntentWatchStore | undefined) : undefined,
        }),
      inject: [PAYMENTS_WEBHOOKS_OPTIONS, ...(inbox ? [PaymentsInbox] : []), ...(reconcile ? [IntentWatchStore] : [])],
    },
  ];
  if (reconcile) {
    providers.push(
      {
        provide: IntentWatchStore,
        useFactory: (webhooks: ResolvedWebhooksOptions, store: IdempotencyStore, runtime: PaymentsRuntime) =>
          webhooks.reconcile ? intentWatchStoreFor(webhooks.reconcile, store, runtime, webhooks.instance) : undefined,
        inject: [PAYMENTS_WEBHOOKS_OPTIONS, IdempotencyStore, PAYMENTS_RUNTIME],
      },
      PaymentsReconciler,
    );
  }
  return { providers, exports: reconcile && unnamed ? [PaymentsReconciler] : [] };
}

/** The plug-in parts a receiver built for its options (each absent when its option is). */
export interface ReceiverPluginParts {
  /** The transactional inbox (`webhooks.transactions`). */
  inbox?: PaymentsInbox;
  /** Reconciliation's watch list (`webhooks.reconcile`). */
  watchList?: IntentWatchStore;
}

/**
 * The dispatcher's plug-ins for `webhooks`, in the order their hooks run: the transactional inbox
 * (around a handler run), reconciliation's watch-list settlement and the delivery listener (after a
 * dispatch). Only the options in use contribute one: a receiver with none has no hook to call.
 */
export function dispatchPluginsOf(
  webhooks: ResolvedWebhooksOptions,
  parts: ReceiverPluginParts,
): PaymentsDispatchPlugin[] {
  const plugins: PaymentsDispatchPlugin[] = [];
  if (webhooks.transactions && parts.inbox) plugins.push(parts.inbox);
  if (webhooks.reconcile && parts.watchList)
    plugins.push(
      new WatchListSettlement(parts.watchList, webhooks.reconcile.terminalStates, pacingOf(webhooks.reconcile)),
    );
  if (webhooks.deliveryListener)
    plugins.push(new DeliveryListenerPlugin(webhooks.deliveryListener, webhooksLogger(webhooks)));
  return plugins;
}
