export * from './sign-webhook.js';
export * from './create-payment-event.js';
export * from './simulator/index.js';
export * from './idempotency-store.contract.js';
export { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../core/payments.runtime.js';
export type { PaymentsClock } from '../core/payments.clock.js';
