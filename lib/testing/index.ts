export * from './sign-webhook.js';
export * from './create-payment-event.js';
export * from './simulator/index.js';
export * from './idempotency-store.contract.js';
export { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../core/payments.runtime.js';
export type { PaymentsClock } from '../core/payments.clock.js';
// A scheme the simulator can key per endpoint (the built-in schemes are); declared in the receiver's contracts.
export type { KeyableSignatureScheme } from '../webhooks/contracts/keyable-signature-scheme.interface.js';
export type { WebhookSignatureScheme } from '../webhooks/contracts/webhook-signature-scheme.interface.js';
