import type { Pending } from '../../core/payments.pending.js';
import type { PaymentEvent } from './payment-event.types.js';

/** How one handler fared with one event. */
export type DispatchHandlerStatus =
  | 'done'
  | 'skipped'
  | 'busy'
  | 'failed'
  | 'store_unavailable'
  /** Current-state handling: the intent has left the event's state; not run (the current state is dispatched). */
  | 'superseded'
  /** Current-state handling: the retrieve of the intent failed (network, 5xx, 429, 401/403); not run. */
  | 'retrieve_failed'
  /** Current-state handling: the service answered 404 to the retrieve of the intent; not run. */
  | 'gone';

/** One handler's line of a `DispatchResult`. */
export interface DispatchHandlerResult {
  /** `ClassName.methodName`. */
  handler: string;
  status: DispatchHandlerStatus;
  /** How long the handler ran, when it ran. */
  durationMs?: number;
  /** The attempt number the handler saw (`ctx.deliveryAttempt`), when it ran. */
  attempt?: number;
  /** What the handler (`failed`), the store (`store_unavailable`) or the retrieve (`retrieve_failed`, `gone`) threw. */
  error?: unknown;
}

/**
 * Outcome of one event:
 * - `handled`: every bound handler ran now or earlier;
 * - `duplicate`: every bound handler had already completed (a redelivery);
 * - `busy`: a handler is being run by a concurrent delivery (answer 409);
 * - `failed`: a handler threw; its claim was released so a redelivery runs it (answer 500);
 * - `unhandled`: no handler is bound to the event type (answer 200);
 * - `store_unavailable`: the idempotency store failed; nothing ran without a claim (answer 503);
 * - `superseded` (current-state handling): the intent has left the event's state; the opted-in handlers
 *   did not run and the intent's current state was dispatched instead (answer 200);
 * - `retrieve_failed` (current-state handling): the intent could not be retrieved; nothing ran on a
 *   guess (answer 503, redelivered);
 * - `gone` (current-state handling): the service answered 404 to the retrieve; nothing ran (answer 200,
 *   as reconciliation gives such an intent up).
 */
export type DispatchOutcome =
  | 'handled'
  | 'duplicate'
  | 'busy'
  | 'failed'
  | 'unhandled'
  | 'store_unavailable'
  | 'superseded'
  | 'retrieve_failed'
  | 'gone';

/** What `PaymentEventsDispatcher.dispatch` returns. */
export interface DispatchResult {
  outcome: DispatchOutcome;
  handlers: DispatchHandlerResult[];
}

/** Facts about the delivery (or queued job) carrying the event. */
export interface DispatchMeta {
  receivedAt: Date;
  /** The queue's attempt number, when a worker dispatches. The store's claim count is used if higher. */
  deliveryAttempt?: number;
  /** Where the event came from: a delivery (default), or the reconciler's retrieve of the intent. */
  source?: 'webhook' | 'reconciliation';
  /**
   * Set on the dispatch of an intent's current state that current-state handling made for a delivery
   * it answered `superseded`: that delivery's event id. Its runs are a retrieve's, as reconciliation's.
   */
  supersedes?: string;
}

/**
 * Runs a verified event through its handlers (the dispatcher): what the inline processor and the queue
 * worker call, injected under `PAYMENT_EVENTS_DISPATCHER`. Answers a value when nothing had to wait.
 */
export interface PaymentEventsDispatch {
  dispatch(event: PaymentEvent, meta: DispatchMeta): Pending<DispatchResult>;
}
