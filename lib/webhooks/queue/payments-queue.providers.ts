import { Inject, type InjectionToken, type Provider } from '@nestjs/common';
import { getPaymentsInstanceToken } from '../../core/payments.instance.js';
import { PaymentEventsEnqueuer } from './payment-events.enqueuer.js';
import { PaymentEventsQueue } from './payment-events.queue.js';
import { PaymentEventsWorker } from './payment-events.worker.js';
import { PAYMENTS_EVENTS_QUEUE, PAYMENTS_QUEUE_WORKER } from './payments-queue.constants.js';

/**
 * The token of the `PaymentEventsQueue` of one module instance: the class for the unnamed instance,
 * a string for a named one.
 *
 * @example
 * const failed = await app.get<PaymentEventsQueue>(getPaymentEventsQueueToken('eu')).failed();
 */
export function getPaymentEventsQueueToken(name?: string): typeof PaymentEventsQueue | string {
  return getPaymentsInstanceToken(PaymentEventsQueue, name);
}

/**
 * Injects the `PaymentEventsQueue` of the instance `name` (the unnamed one when omitted).
 *
 * @example
 * constructor(@InjectPaymentEventsQueue('eu') private readonly euEvents: PaymentEventsQueue) {}
 */
export const InjectPaymentEventsQueue = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getPaymentEventsQueueToken(name));

/**
 * The queue part, registered only in queued mode (`webhooks.processing: { queue }`): the producer
 * with the operator's failed/replay view and its processor for the receiver, and apart from them the
 * worker (left out when `worker` is false; undefined: the options decide at boot).
 */
export function createPaymentsQueuePart(
  name: string,
  worker?: boolean,
): { providers: Provider[]; exports: InjectionToken[] } {
  const token = getPaymentEventsQueueToken(name);
  const providers: Provider[] = [
    { provide: PAYMENTS_EVENTS_QUEUE, useClass: PaymentEventsQueue },
    // The unnamed instance alone provides the class token: `app.get(PaymentEventsQueue)` is never another instance's.
    { provide: token, useExisting: PAYMENTS_EVENTS_QUEUE },
    PaymentEventsEnqueuer,
  ];
  if (worker !== false) providers.push({ provide: PAYMENTS_QUEUE_WORKER, useClass: PaymentEventsWorker });
  return { providers, exports: [token] };
}
