export { PaymentsService } from './payments.service.js';
export type * from './payments.types.js';
export type { PaymentsQuery, PaymentsQueryValue, PaymentsRequest } from './payments-request.interface.js';
export type { PaymentIntentsResource, SetupIntentsResource, WebhookEndpointsResource } from './resources/index.js';
export { getPaymentsServiceToken, InjectPaymentsService } from './payments-client.tokens.js';
