import type { DispatchHandlerStatus, DispatchOutcome } from './dispatch-result.types.js';

/** What the receiver answered one verified delivery (inline or queued). */
export interface PaymentDeliveryRecord {
  /** Canonical event id (`payload.id`). */
  eventId: string;
  /** Event type, e.g. `payment_intent.succeeded`. */
  type: string;
  /** Endpoint id of the payload (`webhook_id`). */
  webhookId: string;
  /** HTTP status the receiver answered: 200, 409, 500 or 503. */
  status: number;
  /** The answer's `outcome`: `handled`, `duplicate`, `failed`, `enqueued`, ... */
  outcome: string;
  receivedAt: Date;
}

/** A delivery the receiver refused (bad signature, oversized, malformed...) or failed on before any handler. */
export interface PaymentRejectionRecord {
  /** HTTP status answered: 400, 401, 403, 408, 413, 500... */
  status: number;
  /** Machine-readable reason of the answer, e.g. `invalid_signature`, `payload_too_large`, `internal_error`. */
  reason: string;
  at: Date;
}

/** One handler's part of a `PaymentDispatchRecord`. */
export interface PaymentDispatchHandlerRecord {
  /** `ClassName.methodName`. */
  handler: string;
  status: DispatchHandlerStatus;
  durationMs?: number;
  /** `Name: message` of what the handler threw (the merchant's own text, cut to 300 characters). */
  error?: string;
}

/** One run of the handlers bound to an event (in the request, or by the queue's worker). */
export interface PaymentDispatchRecord {
  eventId: string;
  type: string;
  outcome: DispatchOutcome;
  handlers: PaymentDispatchHandlerRecord[];
  /** Queue attempt number when a worker dispatched; undefined inline. */
  deliveryAttempt?: number;
  receivedAt: Date;
  finishedAt: Date;
}

/**
 * Opt-in observer of the receiver (`webhooks.deliveryListener`): told of every verified delivery and
 * of every dispatch of an event to its handlers, after the fact. It never sees headers, bodies or
 * secrets, and cannot change an outcome: what it throws is logged at warn level and ignored. Calls are
 * synchronous on the delivery path, so keep them cheap (record, do not do I/O). `PaymentDeliveryJournal`
 * is the built-in one.
 *
 * @example
 * PaymentsModule.forRoot({ ..., webhooks: { verifier, deliveryListener: new PaymentDeliveryJournal() } })
 */
export interface PaymentDeliveryListener {
  /** A verified delivery was answered. Not called for rejected deliveries (401, 400, 413, ...). */
  onDelivery?(record: PaymentDeliveryRecord): void;
  /** A delivery was refused before its event was trusted (no event id: nothing of it is verified). */
  onRejection?(record: PaymentRejectionRecord): void;
  /** The handlers bound to an event ran (or were skipped as already completed). */
  onDispatch?(record: PaymentDispatchRecord): void;
  /** The reconciler (`webhooks.reconcile`) settled a watched intent, or stopped watching it. */
  onReconcile?(record: PaymentReconcileRecord): void;
}

/**
 * What the reconciler did with one watched intent: `reconciled` (a terminal state no webhook had
 * delivered; its handlers ran), `settled` (terminal, its handlers had already run), `gave_up` (still not
 * terminal at `maxAgeSeconds`: for a person to look at), `gone` (the service answered 404).
 */
export interface PaymentReconcileRecord {
  kind: 'payment_intent' | 'setup_intent';
  intentId: string;
  /** The state the retrieve showed (absent for `gone`). */
  state?: string;
  outcome: 'reconciled' | 'settled' | 'gave_up' | 'gone';
  at: Date;
}
