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
