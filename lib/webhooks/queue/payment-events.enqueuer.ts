import { Inject, Injectable, Logger } from '@nestjs/common';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import type {
  PaymentEventsProcessingResult,
  PaymentEventsProcessor,
} from '../contracts/payment-events-processor.interface.js';
import { PaymentEventsQueue } from './payment-events.queue.js';
import { PAYMENTS_EVENTS_QUEUE, PAYMENTS_QUEUE_LOGGER } from './payments-queue.constants.js';

/**
 * The `PaymentEventsProcessor` of `webhooks.processing: { queue }` ([W3]), on the receiving side: it only
 * enqueues (the worker, `PaymentEventsWorker`, consumes). After verification and parsing, the event
 * becomes a BullMQ job (job id = event id) and the delivery is answered as soon as Redis has
 * accepted it: 200 `enqueued`, or 200 `duplicate` when a job for that event already exists. When Redis
 * does not accept it (down, or slower than `enqueueTimeoutMs`), 503 `queue_unavailable`: the service
 * redelivers later, and nothing was lost. The handlers run in the worker.
 */
@Injectable()
export class PaymentEventsEnqueuer implements PaymentEventsProcessor {
  private readonly logger = new Logger(PAYMENTS_QUEUE_LOGGER);

  constructor(@Inject(PAYMENTS_EVENTS_QUEUE) private readonly queue: PaymentEventsQueue) {}

  async process(event: PaymentEvent, receivedAt: Date): Promise<PaymentEventsProcessingResult> {
    try {
      const outcome = await this.queue.enqueue(event, receivedAt);
      // No line per enqueued delivery (Nest's default logger prints debug): the worker's dispatch logs
      // one when `webhooks.logDeliveries` is on (docs/logging.md).
      return { status: 200, outcome };
    } catch (error) {
      this.logger.error(
        `Event ${event.id} (${event.event}) not enqueued, answered 503: ${error instanceof Error ? error.message : 'unknown error'}`,
      );
      return { status: 503, outcome: 'queue_unavailable' };
    }
  }
}
