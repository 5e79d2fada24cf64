import type { PaymentsValuesPlugin } from '../contracts/payments-receiver-plugin.interface.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { PaymentsInbox } from './payments-inbox.js';
import { resolveTransactionsOptions } from './payments-transactions.options.js';

/** The inbox's hooks for `webhooks`: around the calls of the handlers it covers; none without `webhooks.transactions`. */
export function transactionalInboxHooks(
  webhooks: ResolvedWebhooksOptions,
  inbox: PaymentsInbox,
): PaymentsInbox | undefined {
  return webhooks.transactions ? inbox : undefined;
}

/**
 * The transactional inbox (`webhooks.transactions`) as a plug-in: `PaymentsInbox` runs each handler it
 * covers in a transaction with its completion record, around the call; claiming, renewing, completing
 * and releasing stay the dispatcher's.
 */
export function transactionalInboxPlugin(): PaymentsValuesPlugin {
  return Object.freeze({
    name: 'inbox',
    option: 'transactions',
    resolveOption: resolveTransactionsOptions,
    providers: [PaymentsInbox],
    hooks: { inject: [PaymentsInbox], useFactory: transactionalInboxHooks },
  });
}
