/** Name of the Nest `Logger` of the queue, its enqueuer and its worker. */
export const PAYMENTS_QUEUE_LOGGER = 'PaymentsWebhooksQueue';

/**
 * Token of the queue part's worker inside one instance (`PaymentEventsWorker`, or nothing with
 * `worker: false`): the producer reads its status for health checks.
 */
export const PAYMENTS_QUEUE_WORKER = Symbol('PAYMENTS_QUEUE_WORKER');

/**
 * Token of the `PaymentEventsQueue` inside one instance (its processor injects it). The class token
 * names only the unnamed instance's queue, even for `app.get`; a named instance exports its own under
 * `getPaymentEventsQueueToken(name)`.
 */
export const PAYMENTS_EVENTS_QUEUE = Symbol('PAYMENTS_EVENTS_QUEUE');
