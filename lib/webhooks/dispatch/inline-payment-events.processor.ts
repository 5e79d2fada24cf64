import { Injectable } from '@nestjs/common';
import { isPromiseLike, type Pending } from '../../core/payments.pending.js';
import { PaymentEventsDispatcher, type DispatchOutcome, type DispatchResult } from './payment-events.dispatcher.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import type {
  PaymentEventsProcessingResult,
  PaymentEventsProcessor,
} from '../contracts/payment-events-processor.interface.js';

/** The HTTP answer for each dispatch outcome (the answer table of docs/webhooks.md). */
export const DISPATCH_OUTCOME_STATUS: Readonly<Record<DispatchOutcome, PaymentEventsProcessingResult['status']>> =
  Object.freeze({
    handled: 200,
    duplicate: 200,
    unhandled: 200,
    busy: 409,
    failed: 500,
    store_unavailable: 503,
    superseded: 200,
    retrieve_failed: 503,
    gone: 200,
  });

/** One frozen result per outcome: an inline delivery allocates none. */
const RESULTS = Object.freeze(
  Object.fromEntries(
    Object.entries(DISPATCH_OUTCOME_STATUS).map(([outcome, status]) => [outcome, Object.freeze({ status, outcome })]),
  ),
) as Readonly<Record<DispatchOutcome, PaymentEventsProcessingResult>>;

const resultOf = ({ outcome }: DispatchResult): PaymentEventsProcessingResult => RESULTS[outcome];

/**
 * The default processor: runs the handlers during the request and answers once they are done, so a
 * failure answers 5xx and the service's own retry brings the event back.
 */
@Injectable()
export class InlinePaymentEventsProcessor implements PaymentEventsProcessor {
  constructor(private readonly dispatcher: PaymentEventsDispatcher) {}

  /** The dispatch's answer, without a promise when the dispatch needed none (memory store, synchronous handler). */
  process(event: PaymentEvent, receivedAt: Date): Pending<PaymentEventsProcessingResult> {
    const dispatched = this.dispatcher.dispatch(event, { receivedAt });
    return isPromiseLike(dispatched) ? dispatched.then(resultOf) : resultOf(dispatched);
  }
}
