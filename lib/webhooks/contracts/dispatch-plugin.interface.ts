import type { EventRecord } from './event-record.types.js';
import type { DispatchHandlerResult, DispatchMeta, DispatchOutcome } from './dispatch-result.types.js';
import type { PaymentEvent, PaymentEventContext } from './payment-event.types.js';
import type { PaymentEventHandlerRegistration } from './payment-event-handler.types.js';
import type {
  PaymentDeliveryRecord,
  PaymentReconcileRecord,
  PaymentRejectionRecord,
} from './payment-delivery-listener.interface.js';

/**
 * Longest a current-state retrieve waits for its turn in a plug-in's rate (ms): past it, the plug-in's
 * `retrieveDelayMs` answers `Infinity`, and the delivery answers 503 and is redelivered later.
 */
export const MAX_CURRENT_STATE_WAIT_MS = 5_000;

/** What one dispatch did, as the `afterDispatch` hooks see it. */
export interface DispatchSummary {
  readonly event: PaymentEvent;
  readonly meta: DispatchMeta;
  /** The record the event's runs are kept in (an intent's, with its state; or the event's own). */
  readonly record: EventRecord;
  readonly outcome: DispatchOutcome;
  readonly results: readonly DispatchHandlerResult[];
  /** When the dispatch settled, in ms since the epoch (the instance's runtime clock). */
  readonly finishedAt: number;
}

/**
 * One claimed handler call, as an `aroundHandler` hook gets it: the dispatcher claimed the run, and will
 * complete it, release it or keep renewing it whatever the hook answers.
 */
export interface HandlerCall {
  readonly handler: PaymentEventHandlerRegistration;
  readonly event: PaymentEvent;
  readonly context: PaymentEventContext;
  /** The run's record key and slot in the idempotency store. */
  readonly key: string;
  readonly slot: string;
  /** The event the run is for; undefined for a run from a retrieve of the intent. */
  readonly eventId: string | undefined;
  /** Calls the handler with `context`, or with the context given (e.g. with its `transaction`). */
  invoke(context?: PaymentEventContext): unknown;
}

/**
 * What an `aroundHandler` hook made of a call: `ran` (the handler ran and its effect is committed),
 * `skipped` (the hook knows the run already happened: completed, nothing ran), `busy` (a concurrent
 * run holds it: released, answered 409).
 */
export type HandlerCallOutcome = 'ran' | 'skipped' | 'busy';

/**
 * What a plug-in of the receiver contributes to the dispatcher: hooks, each optional. The dispatcher
 * knows this interface only; each plug-in (the transactional inbox, reconciliation, the delivery
 * listener) registers its own provider, and a receiver that uses none has none.
 *
 * - Around a handler call: `handles` / `aroundHandler`: the plug-in calls a claimed handler itself (the
 *   inbox: in a transaction with its record) and says how it went; claiming, renewing, completing and
 *   releasing stay the dispatcher's.
 * - At a completion: `unwatches`: whether completing a run of this record's state also ends the
 *   intent's watch, in the same store call (reconciliation, when its list lives in the records).
 * - After a dispatch: `afterDispatch`: told what the dispatch did.
 * - After the answer: `afterAnswer`: told what a delivery was answered, whichever way it came (route,
 *   `PaymentsWebhookReceiver.receive`, a broker, a function), or that it was refused before its event
 *   was trusted.
 * - After a reconciliation: `onReconcile`: told what the reconciler did with a watched intent.
 *
 * The "after" hooks are called synchronously; one that throws is logged and never changes an outcome.
 */
export interface PaymentsDispatchPlugin {
  /** A short name for log lines (`'inbox'`, `'reconciliation'`, `'deliveryListener'`). */
  readonly name: string;
  /** Whether `aroundHandler` calls this handler (asked for every claimed run). */
  handles?(handler: PaymentEventHandlerRegistration): boolean;
  /**
   * Calls a claimed handler that `handles` took (`call.invoke`), and says how it went. Rejects with the
   * handler's own error when it threw (the run is released, 500), or with a
   * `HandlerCallUnavailableError` (`lib/errors`) when the plug-in's engine failed (released, 503).
   */
  aroundHandler?(call: HandlerCall): Promise<HandlerCallOutcome>;
  /** Said in the error line of a handler that `aroundHandler` called and that threw (the inbox: `'transaction rolled back'`). */
  readonly failureNote?: string;
  unwatches?(record: EventRecord): boolean;
  afterDispatch?(dispatch: DispatchSummary): void;
  /** A delivery was answered (`answered`: verified, with its event) or refused before its event was trusted (`refused`). */
  afterAnswer?(answer: DeliveryAnswer): void;
  /** The reconciler settled a watched intent, or stopped watching it. */
  onReconcile?(record: PaymentReconcileRecord): void;
  /**
   * Current-state handling, before a retrieve of an intent: how long to wait (ms) for that retrieve's
   * turn in the plug-in's rate (reconciliation's `maxRetrievesPerSecond`), the turn reserved; 0: now;
   * `Infinity`: no turn within the plug-in's bound (none reserved; the delivery answers 503).
   */
  retrieveDelayMs?(now: number): number;
  /** Current-state handling: what a retrieve of `record`'s intent answered (the intent, or the error). */
  afterRetrieve?(record: EventRecord, answer: RetrieveAnswer): void;
  /**
   * Current-state handling: whether a retrieved state of an intent is dispatched (a superseded
   * delivery's current state), as reconciliation dispatches only its terminal states. Without a plug-in
   * that says, the default terminal states (`DEFAULT_TERMINAL_STATES`).
   */
  dispatchesRetrieved?(kind: 'payment_intent' | 'setup_intent', state: string): boolean;
}

/** What a delivery was answered, as `afterAnswer` hooks see it. */
export type DeliveryAnswer =
  | { readonly kind: 'answered'; readonly record: PaymentDeliveryRecord }
  | { readonly kind: 'refused'; readonly record: PaymentRejectionRecord };

/** What a current-state retrieve of an intent answered, as `afterRetrieve` hooks see it. */
export type RetrieveAnswer = { readonly state: string } | { readonly error: unknown };

/** Injection token of the receiver's plug-ins' hooks (an array, possibly empty), gathered by the receiver. */
export const PAYMENTS_DISPATCH_PLUGINS = Symbol('PAYMENTS_DISPATCH_PLUGINS');
