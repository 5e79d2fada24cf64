import type { PaymentEvent } from '../contracts/payment-event.types.js';

/** What a queued delivery stores in Redis: the verified event and when it reached the receiver. */
export interface PaymentEventJobData {
  event: PaymentEvent;
  /** ISO-8601 time the delivery was received (becomes `ctx.receivedAt` in handlers). */
  receivedAt: string;
  /** W3C `traceparent` of the enqueue span, when a trace was sampled: the worker's span joins that trace. */
  traceparent?: string;
}

/** Result of `PaymentEventsQueue.enqueue`: a new job, or a job with the same event id already there. */
export type PaymentEventEnqueueOutcome = 'enqueued' | 'duplicate';

/** A queued event whose handlers still failed after every attempt (BullMQ's failed set). */
export interface FailedPaymentEvent {
  /** Event id, which is also the job id. */
  eventId: string;
  /** Event name, e.g. `payment_intent.succeeded`. */
  type: string;
  /** Why the last attempt failed (outcome and failed handler names; never a body or a secret). */
  failedReason: string;
  /** Attempts made so far. */
  attemptsMade: number;
  /** When the job last failed, or undefined if BullMQ did not record it. */
  failedAt: Date | undefined;
}
