import type { Provider } from '@nestjs/common';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { IdempotencyStore } from '../contracts/idempotency-store.interface.js';
import { IntentWatchStore } from '../contracts/intent-watch-store.interface.js';
import type { PaymentsReceiverPlugin } from '../contracts/payments-receiver-plugin.interface.js';
import type { ResolvedPaymentsReconcileOptions } from '../contracts/payments-reconcile.options.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { MemoryIntentWatchStore } from '../stores/memory-intent-watch.store.js';
import { PaymentsReconciler } from './payments-reconciler.js';
import { pacingOf } from './reconcile-batch.js';
import { WatchListSettlement } from './watch-list.settlement.js';

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
 * Reconciliation's hooks for `webhooks`: the watch list's settlement (a webhook that settled a watched
 * intent ends its watch; current-state retrieves share the reconciler's pace); none when it is off.
 */
export function reconciliationHooks(
  webhooks: ResolvedWebhooksOptions,
  watchList: IntentWatchStore | undefined,
): WatchListSettlement | undefined {
  if (!webhooks.reconcile || !watchList) return undefined;
  return new WatchListSettlement(watchList, webhooks.reconcile.terminalStates, pacingOf(webhooks.reconcile));
}

const WATCH_LIST: Provider = {
  provide: IntentWatchStore,
  useFactory: (webhooks: ResolvedWebhooksOptions, store: IdempotencyStore, runtime: PaymentsRuntime) =>
    webhooks.reconcile ? intentWatchStoreFor(webhooks.reconcile, store, runtime, webhooks.instance) : undefined,
  inject: [PAYMENTS_WEBHOOKS_OPTIONS, IdempotencyStore, PAYMENTS_RUNTIME],
};

/**
 * Reconciliation (`webhooks.reconcile`, checked by `resolveReconcileOptions`; on by default where the app
 * has the client) as a plug-in: the watch list, `PaymentsReconciler` (exported by the unnamed instance:
 * its class token), and the dispatcher's hooks of the watch list.
 */
export function reconciliationPlugin(instance: { unnamed: boolean }): PaymentsReceiverPlugin {
  return Object.freeze({
    name: 'reconciliation',
    providers: [WATCH_LIST, PaymentsReconciler],
    exports: instance.unnamed ? [PaymentsReconciler] : [],
    hooks: { inject: [IntentWatchStore], useFactory: reconciliationHooks },
  });
}
