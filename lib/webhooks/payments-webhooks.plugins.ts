import type { PaymentsDispatchPlugin } from './contracts/dispatch-plugin.interface.js';
import type { IntentWatchStore } from './contracts/intent-watch-store.interface.js';
import type { ResolvedWebhooksOptions } from './contracts/payments-webhooks.options.js';
import { webhooksLogger } from './support/payments-webhooks.logger.js';
import { DeliveryListenerPlugin } from './journal/delivery-listener.plugin.js';
import { WatchListSettlement } from './reconcile/watch-list.settlement.js';
import type { PaymentsInbox } from './transactional/payments-inbox.js';

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
  if (webhooks.reconcile && parts.watchList) plugins.push(new WatchListSettlement(parts.watchList));
  if (webhooks.deliveryListener)
    plugins.push(new DeliveryListenerPlugin(webhooks.deliveryListener, webhooksLogger(webhooks)));
  return plugins;
}
