export * from './payment-event.types.js';
export * from './payment-events-processor.interface.js';
export { OnPaymentEvent, type OnPaymentEventOptions, type OnPaymentEventDecorator } from './on-payment-event.decorator.js';
export { PaymentEventsRegistry, type PaymentEventHandlerRegistration } from './payment-events.registry.js';
export {
  PaymentEventsDispatcher,
  type DispatchResult,
  type DispatchOutcome,
  type DispatchHandlerResult,
  type DispatchHandlerStatus,
  type DispatchMeta,
} from './payment-events.dispatcher.js';
export { InlinePaymentEventsProcessor, DISPATCH_OUTCOME_STATUS } from './inline-payment-events.processor.js';
export { PaymentEventIntentMissingError, retrieveIntentOf } from './payment-event.context.js';
export { parseWebhookPayload, type WebhookPayloadParseResult, type WebhookPayloadProblem } from './webhook-payload.parser.js';
export { WebhookSignatureGuard, getVerifiedWebhookDelivery, type VerifiedWebhookDelivery } from './webhook-signature.guard.js';
export { WebhookRejectionException, type WebhookRejectionBody } from './webhook-rejection.exception.js';
export { createPaymentsWebhookController, type WebhookReceiptBody } from './payments-webhook.controller.js';
export { isPaymentsWebhookRoute } from './payments-webhook-route.helper.js';
export { PAYMENTS_WEBHOOKS_LOGGER, type WebhookRejectionReason } from './payments-webhooks.messages.js';
export * from './verifiers/index.js';
export * from './stores/index.js';
export * from './queue/index.js';
export { getPaymentEventsRegistryToken } from './payments-webhooks.providers.js';
export * from './journal/index.js';
export * from './transactional/index.js';
