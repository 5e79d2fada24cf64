/**
 * Injection tokens and metadata keys of the payments module, in one list: each part defines its own
 * (the core, the client, the receiver, the queue) and this file re-exports them.
 */

export { DEFAULT_API_VERSION, DEFAULT_WEBHOOKS_PATH } from './core/payments.defaults.js';
export { PAYMENTS_RUNTIME } from './core/payments.runtime.js';

export {
  PAYMENT_EVENT_HANDLER_METADATA,
  PAYMENT_EVENT_HANDLER_OPTIONS_METADATA,
  PAYMENTS_WEBHOOK_ROUTE_METADATA,
  PAYMENTS_WEBHOOKS_PATH,
} from './webhooks/contracts/payments-webhooks.constants.js';
