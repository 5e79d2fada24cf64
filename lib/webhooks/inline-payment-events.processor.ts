import { Injectable } from '@nestjs/common';
import { PaymentEventsDispatcher, type DispatchOutcome } from './payment-events.dispatcher.js';
import type { PaymentEvent } from './payment-event.types.js';
import type { PaymentEventsProcessingResult, PaymentEventsProcessor } from './payment-events-processor.interface.js';

/** The HTTP answer for each dispatch outcome (the answer table of docs/webhooks.md). */
export const DISPATCH_OUTCOME_STATUS: Readonly<Record<DispatchOutcome, PaymentEventsProcessingResult['status']>> =
  Object.freeze({
    handled: 200,
    duplicate: 200,
    unhandled: 200,
    busy: 409,
    failed: 500,
    store_unavailable: 503,
  });

/**
 * The default processor: runs the handlers during the request and answers once they are done, so a
 * failure answers 5xx and the service's own retry brings the event back.
 */
@Injectable()
export class InlinePaymentEventsProcessor implements PaymentEventsProcessor {
  constructor(private readonly dispatcher: PaymentEventsDispatcher) {}

  async process(event: PaymentEvent, receivedAt: Date): Promise<PaymentEventsProcessingResult> {
    const { outcome } = await this.dispatcher.dispatch(event, { receivedAt });
    return { status: DISPATCH_OUTCOME_STATUS[outcome], outcome };
  }
}
