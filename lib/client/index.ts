/*
 * `nestjs-payments/client`: the API client, its resources' types, and the types of `request()` and of
 * the `http` options (the root entry re-exports the client and the resource types).
 */
export { PaymentsService } from './payments.service.js';
export type {
  PaymentIntent,
  PaymentIntentState,
  SetupIntent,
  SetupIntentState,
  WebhookEndpoint,
} from './payments.types.js';
export type { PaymentsQuery, PaymentsRequest } from './payments-request.interface.js';
export { getPaymentsServiceToken, InjectPaymentsService } from './payments-client.tokens.js';
export type { PaymentsEnvironment, PaymentsHttpOptions } from './payments-client.options.js';
export type { PaymentsHttpMethod } from '../core/payments-http-method.js';
export type { PaymentsCreateOptions } from './payments-created-intents.js';
