/*
 * The root entry point, `nestjs-payments`: what an application writes (the module, its options, the
 * client, handlers, verifiers, stores, errors) and the documented extension points. Internals stay
 * out; the list is pinned by test/unit/public-api.spec.ts.
 */
export { PaymentsModule } from './payments.module.js';
export type {
  PaymentsEnvironment,
  PaymentsHttpOptions,
  PaymentsModuleOptions,
  PaymentsProcessingOptions,
  PaymentsQueueOptions,
  PaymentsWebhooksOptions,
} from './payments-options.interface.js';
export { PAYMENTS_RUNTIME, type PaymentsRuntime } from './core/payments.runtime.js';
export type { PaymentsClock } from './core/payments.clock.js';
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
  type PaymentsHttpMethod,
} from './errors/index.js';
export * from './client/index.js';
export * from './webhooks/index.js';
