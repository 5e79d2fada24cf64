/*
 * `nestjs-payments/webhooks`: the whole surface of the receiver (the root entry re-exports the part an
 * application writes daily): handlers and their registry, verifiers, stores and their schemas, queued
 * processing, the delivery listener and its records, transactional handlers, the plug-in interface
 * (`PaymentsReceiverPlugin`), and the option types of each part.
 */
export type { PaymentsProcessingOptions, PaymentsWebhooksOptions } from './contracts/payments-webhooks.options.js';
export type { PaymentsQueueConnection, PaymentsQueueOptions } from './contracts/payments-queue.options.js';
export {
  PAYMENT_EVENT_TYPES,
  type ChargeEventData,
  type HandledPaymentState,
  PaymentEvent,
  PaymentEventContext,
  type PaymentEventPattern,
  type PaymentEventType,
  type PaymentEventTypeMap,
  type PaymentEventTypesOf,
  type PaymentIntentEventData,
  type SetupIntentEventData,
} from './contracts/payment-event.types.js';
export { OnPaymentEvent, type OnPaymentEventOptions } from './dispatch/on-payment-event.decorator.js';
export { PaymentEventsRegistry } from './dispatch/payment-events.registry.js';
export { getPaymentEventsRegistryToken } from './payments-webhooks.providers.js';
export { PaymentEventIntentMissingError } from './dispatch/payment-event.context.js';
export { isPaymentsWebhookRoute } from './receiver/payments-webhook-route.helper.js';
export { getPaymentsWebhookReceiverToken, PaymentsWebhookReceiver } from './receiver/payments-webhook.receiver.js';
export type {
  PaymentsWebhookDelivery,
  PaymentsWebhookReceipt,
  WebhookReceiptBody,
  WebhookRejectionBody,
} from './contracts/payments-webhook-receipt.types.js';
export type {
  PaymentsPluginReceiverOptions,
  PaymentsReceiverPlugin,
} from './contracts/payments-receiver-plugin.interface.js';
export type {
  DeliveryAnswer,
  DispatchSummary,
  HandlerCall,
  HandlerCallOutcome,
  PaymentsDispatchPlugin,
  RetrieveAnswer,
} from './contracts/dispatch-plugin.interface.js';
export { PAYMENTS_WEBHOOK_ROUTE_METADATA } from './contracts/payments-webhooks.constants.js';
export * from './verifiers/index.js';
export * from './stores/index.js';
export {
  runRecord,
  MAX_DONE_PER_SLOT,
  type RunRecordDocument,
  type RunRecordSlot,
  type RunRecordClaim,
} from './records/run-record.js';
export type { EventRecord, RecordIntentKind } from './contracts/event-record.types.js';
export {
  getPaymentEventsQueueToken,
  InjectPaymentEventsQueue,
  PaymentEventsQueue,
  type FailedPaymentEvent,
} from './queue/index.js';
export * from './journal/index.js';
export {
  clsTransactionRunner,
  PaymentsInbox,
  paymentsInboxSchema,
  pgTransactionRunner,
  type ClsTransactionRunnerOptions,
  type PaymentsQueryResult,
  type PaymentsTransaction,
  type PaymentsTransactionRunner,
  type PaymentsTransactionsOptions,
  type PgTransactionRunnerOptions,
} from './transactional/index.js';
export {
  PaymentsWebhooksModule,
  type PaymentsWebhooksModuleAsyncOptions,
  type PaymentsWebhooksModuleOptions,
  type PaymentsWebhooksRegistration,
  type PaymentsWebhooksValues,
} from './payments-webhooks.module.js';
export { PaymentsReconciler, type ReconcileSweepResult } from './reconcile/payments-reconciler.js';
export {
  IntentWatchStore,
  type WatchedIntent,
  type WatchedIntentKind,
} from './contracts/intent-watch-store.interface.js';
export type { PaymentsReconcileOptions, ReconcileCadenceStep } from './contracts/payments-reconcile.options.js';
export { MemoryIntentWatchStore } from './stores/memory-intent-watch.store.js';
export { RedisIntentWatchStore } from './stores/redis-intent-watch.store.js';
export {
  PostgresIntentWatchStore,
  type PostgresIntentWatchStoreOptions,
} from './stores/postgres-intent-watch.store.js';
