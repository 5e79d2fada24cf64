import type { PaymentsReceiverPlugin } from '../contracts/payments-receiver-plugin.interface.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { PaymentsInbox } from './payments-inbox.js';

/** The inbox's hooks for `webhooks`: around the calls of the handlers it covers; none without `webhooks.transactions`. */
export function transactionalInboxHooks(
  webhooks: ResolvedWebhooksOptions,
  inbox: PaymentsInbox,
): PaymentsInbox | undefined {
  return webhooks.transactions ? inbox : undefined;
}

/**
 * The transactional inbox (`webhooks.transactions`, checked by `resolveTransactionsOptions`) as a plug-in: `PaymentsInbox` runs each handler it
 * covers in a transaction with its completion record, around the call; claiming, renewing, completing
 * and releasing stay the dispatcher's.
 */
export function transactionalInboxPlugin(): PaymentsReceiverPlugin {
  return Object.freeze({
    name: 'inbox',
    providers: [PaymentsInbox],
    hooks: { inject: [PaymentsInbox], useFactory: transactionalInboxHooks },
  });
}
