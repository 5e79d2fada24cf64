/*
 * The root entry point, `nestjs-payments`: what an application writes (the module, its options, the
 * client, handlers, verifiers, stores, errors). At most 50 names, pinned by test/unit/public-api.spec.ts.
 * The rest of the receiver's surface (registry, tokens, schemas, option types of each part, listener
 * records) is `nestjs-payments/webhooks`; the client's request and option types `nestjs-payments/client`;
 * the clock (`PAYMENTS_RUNTIME`) `nestjs-payments/testing`.
 */
export { PaymentsModule } from './payments.module.js';
export type {
  PaymentsEnvironment,
  PaymentsModuleOptions,
  PaymentsWebhooksOptions,
} from './payments-options.interface.js';
export {
  PaymentsApiError,
  PaymentsAuthenticationError,
  PaymentsConfigurationError,
  PaymentsConnectionError,
  PaymentsError,
  PaymentsInvalidArgumentError,
  PaymentsPermissionError,
  PaymentsRateLimitError,
  PaymentsResponseTooLargeError,
} from './errors/index.js';
export {
  getPaymentsServiceToken,
  InjectPaymentsService,
  PaymentsService,
  type PaymentIntent,
  type PaymentIntentState,
  type SetupIntent,
  type SetupIntentState,
  type WebhookEndpoint,
} from './client/index.js';
export {
  clsTransactionRunner,
  hmacScheme,
  hmacVerifier,
  IdempotencyStore,
  InjectPaymentEventsQueue,
  isPaymentsWebhookRoute,
  MemoryIdempotencyStore,
  OnPaymentEvent,
  PaymentDeliveryJournal,
  PaymentEventIntentMissingError,
  PaymentEventsQueue,
  PaymentsWebhooksModule,
  pgTransactionRunner,
  PostgresIdempotencyStore,
  RedisIdempotencyStore,
  standardWebhooks,
  standardWebhooksVerifier,
  type FailedPaymentEvent,
  type IdempotencyClaim,
  type OnPaymentEventOptions,
  type PaymentDeliveryListener,
  PaymentEvent,
  PaymentEventContext,
  type PaymentEventType,
  type PaymentEventTypeMap,
  type PaymentIntentEventData,
  type PaymentsTransactionRunner,
  type WebhookSignatureScheme,
  type WebhookVerifier,
} from './webhooks/index.js';
