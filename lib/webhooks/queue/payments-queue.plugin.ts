import type { PaymentsReceiverPlugin } from '../contracts/payments-receiver-plugin.interface.js';
import { PaymentEventsEnqueuer } from './payment-events.enqueuer.js';
import { createPaymentsQueuePart } from './payments-queue.providers.js';

/**
 * Queued processing (`processing: 'queue'`, its options `webhooks.processing.queue` checked by
 * `resolveProcessing`) as a plug-in around processing: the producer and its operator view
 * (`PaymentEventsQueue`, exported under `getPaymentEventsQueueToken(name)`), the worker unless `worker` is
 * false, and `PaymentEventsEnqueuer` as the receiver's processor: a verified event is enqueued and
 * answered, and the worker dispatches it.
 */
export function paymentsQueuePlugin(instance: { name: string; worker?: boolean }): PaymentsReceiverPlugin {
  const part = createPaymentsQueuePart(instance.name, instance.worker);
  return Object.freeze({
    name: 'queue',
    providers: part.providers,
    exports: part.exports,
    processor: PaymentEventsEnqueuer,
  });
}
