export * from './payments.service.js';
export * from './payments.types.js';
export * from './payments-request.interface.js';
export * from './resources/index.js';
export { getPaymentsServiceToken, InjectPaymentsService } from './payments-client.tokens.js';
export type { PaymentsClientOptions } from './payments-client.options.js';
