import type { Pending } from '../../core/payments.pending.js';
import type { PaymentEvent } from './payment-event.types.js';

/** What the receiver answers for a verified, parsed event (the answer table of docs/webhooks.md). */
export interface PaymentEventsProcessingResult {
  /** 200 done/skipped/enqueued, 409 in flight elsewhere, 500 a handler failed, 503 store or queue down. */
  status: 200 | 409 | 500 | 503;
  /** Short machine-readable outcome for the JSON answer and the log: 'handled', 'duplicate', 'enqueued', ... */
  outcome: string;
}

/**
 * Runs a verified event after the delivery checks (signature, then parser): inline (`PaymentEventsDispatcher` in the
 * request) or queued (BullMQ; answer once the job is durably accepted).
 */
export interface PaymentEventsProcessor {
  /** The answer for `event`: a promise, or the result at once when nothing had to wait (inline, memory store). */
  process(event: PaymentEvent, receivedAt: Date): Pending<PaymentEventsProcessingResult>;
}

/** Injection token of the processor in use. */
export const PaymentEventsProcessor = Symbol('PaymentEventsProcessor');
