import type { PaymentsClientOptions, ResolvedPaymentsClientOptions } from './client/payments-client.options.js';
import type {
  PaymentsWebhooksOptions,
  ResolvedWebhooksOptions,
} from './webhooks/contracts/payments-webhooks.options.js';

export type { PaymentsEnvironment, PaymentsHttpOptions } from './client/payments-client.options.js';
export type { PaymentsQueueConnection, PaymentsQueueOptions } from './webhooks/contracts/payments-queue.options.js';
export type {
  PaymentsProcessingOptions,
  PaymentsWebhooksOptions,
  ResolvedWebhooksOptions,
} from './webhooks/contracts/payments-webhooks.options.js';

/**
 * Options of `PaymentsModule.forRoot` / the factory of `forRootAsync`: the client's (`apiKey`,
 * `environment`, `baseUrl`, ...) and the receiver's (`webhooks`). Each part validates its own.
 */
export interface PaymentsModuleOptions extends PaymentsClientOptions {
  /** `false` registers no webhook route. */
  webhooks?: false | PaymentsWebhooksOptions;
}

/** The options after validation, with every default filled in. Frozen. Never provided for injection. */
export interface ResolvedPaymentsOptions extends ResolvedPaymentsClientOptions {
  webhooks: false | ResolvedWebhooksOptions;
}
