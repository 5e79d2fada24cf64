export * from './payments.module.js';
export { PAYMENTS_MODULE_OPTIONS } from './payments.module-definition.js';
export type { PaymentsModuleExtras } from './payments.module-definition.js';
export * from './payments.constants.js';
export * from './payments-options.interface.js';
export * from './core/payments.runtime.js';
export * from './errors/index.js';
export * from './client/index.js';
export * from './webhooks/index.js';
