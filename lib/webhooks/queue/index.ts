export * from './payment-event-job.interface.js';
export * from './payment-event-job.error.js';
export * from './payment-events.queue.js';
export { PaymentEventsWorker } from './payment-events.worker.js';
export * from './payment-events.enqueuer.js';
export { getPaymentEventsQueueToken, InjectPaymentEventsQueue } from './payments-queue.providers.js';
