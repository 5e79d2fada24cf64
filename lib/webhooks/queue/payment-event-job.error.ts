import { PaymentsError } from '../../errors/payments.errors.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';

/** The per-handler statuses a dispatch reports, as far as the queue needs them. */
export interface DispatchSummary {
  outcome: string;
  handlers: ReadonlyArray<{ handler: string; status: string }>;
}

/**
 * Thrown by the worker when a dispatch did not finish every handler (a handler failed, another
 * delivery holds a claim, or the store is down), so that BullMQ retries the job with backoff. Its
 * message becomes the job's `failedReason`: the event id and type, the outcome and the handler names,
 * never a body, a handler's error text or a secret.
 */
export class PaymentEventJobError extends PaymentsError {
  override readonly name = 'PaymentEventJobError';

  constructor(
    readonly eventId: string,
    readonly outcome: string,
    readonly handlers: ReadonlyArray<{ handler: string; status: string }>,
  ) {
    const pending = handlers.filter((h) => h.status !== 'done' && h.status !== 'skipped');
    const list = pending.map((h) => `${h.handler}=${h.status}`).join(', ');
    super(`payment event ${eventId}: ${outcome}${list ? ` (${list})` : ''}`);
  }

  static of(event: PaymentEvent, result: DispatchSummary): PaymentEventJobError {
    return new PaymentEventJobError(event.id, result.outcome, result.handlers);
  }
}
