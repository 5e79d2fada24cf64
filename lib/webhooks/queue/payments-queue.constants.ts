/**
 * Token of the queue part's worker inside one instance (`PaymentEventsWorker`, or nothing with
 * `worker: false`): the producer reads its status for health checks.
 */
export const PAYMENTS_QUEUE_WORKER = Symbol('PAYMENTS_QUEUE_WORKER');
