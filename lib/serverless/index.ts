/*
 * `nestjs-payments/serverless`: receiving outside a long-running Nest route. Nest in a function
 * (`createPaymentsWebhookHandler`), and the edge of a broker shape: the forwarder as a function handler
 * (`createPaymentsForwarder`) or as a Nest route (`PaymentsForwarderModule`).
 */
export {
  createPaymentsWebhookHandler,
  type PaymentsApplicationContextOptions,
  type PaymentsWebhookHandler,
  type PaymentsWebhookHandlerOptions,
} from './payments-webhook.handler.js';
export {
  createPaymentsForwarder,
  type PaymentsDeliveryPublisher,
  type PaymentsForwarder,
  type PaymentsForwarderLogger,
  type PaymentsForwarderOptions,
  type PaymentsForwardReceipt,
} from './payments-forwarder.js';
export {
  PaymentsForwarderModule,
  type PaymentsForwarderModuleAsyncOptions,
  type PaymentsForwarderModuleOptions,
} from './payments-forwarder.module.js';
export type { PaymentsForwardedDelivery, ServerlessHttpEvent, ServerlessHttpResult } from './serverless-http.event.js';
