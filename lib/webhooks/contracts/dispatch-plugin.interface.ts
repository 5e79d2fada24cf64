import type { DispatchHandlerResult, DispatchMeta, DispatchOutcome } from './dispatch-result.types.js';
import type { PaymentEvent, PaymentEventContext } from './payment-event.types.js';
import type { PaymentEventHandlerRegistration } from './payment-event-handler.types.js';

/** What one dispatch did, as the `afterDispatch` hooks see it. */
export interface DispatchSummary {
  readonly event: PaymentEvent;
  readonly meta: DispatchMeta;
  readonly outcome: DispatchOutcome;
  readonly results: readonly DispatchHandlerResult[];
  /** When the dispatch settled, in ms since the epoch (the instance's runtime clock). */
  readonly finishedAt: number;
}

/** The claim a handler run holds in the idempotency store while a `runHandler` hook runs it. */
export interface DispatchClaim {
  /** The first key of the run (the one whose record a transactional inbox keeps). */
  readonly key: string;
  readonly token: string;
}

/**
 * What a plug-in of the receiver contributes to the dispatcher: hooks, each optional. The dispatcher
 * knows this interface only; each plug-in (the transactional inbox, reconciliation, the delivery
 * listener) registers its own provider, and a receiver that uses none has none.
 *
 * - Around a handler run: `runsHandler` / `runHandler`: the plug-in runs a claimed handler itself (the
 *   inbox: in a transaction with its completion record) and settles the claim's first key.
 * - After a dispatch: `afterDispatch`: told what the dispatch did (reconciliation stops watching an intent
 *   whose terminal state a webhook settled; the listener tells the app). Called synchronously; a hook
 *   that throws is logged and never changes the outcome.
 */
export interface PaymentsDispatchPlugin {
  /** A short name for log lines (`'inbox'`, `'reconciliation'`, `'deliveryListener'`). */
  readonly name: string;
  /** Whether `runHandler` runs this handler (asked for every claimed run). */
  runsHandler?(handler: PaymentEventHandlerRegistration): boolean;
  /**
   * Runs a claimed handler that `runsHandler` took, completes or releases `claim` (the first key), and
   * says how it went. Never rejects.
   */
  runHandler?(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    ctx: PaymentEventContext,
    claim: DispatchClaim,
  ): Promise<DispatchHandlerResult>;
  afterDispatch?(dispatch: DispatchSummary): void;
}

/** Injection token of the receiver's plug-ins (an array, possibly empty), gathered by the receiver part. */
export const PAYMENTS_DISPATCH_PLUGINS = Symbol('PAYMENTS_DISPATCH_PLUGINS');
