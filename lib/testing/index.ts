export * from './sign-webhook.js';
export * from './create-payment-event.js';
export * from './simulator/index.js';
export * from './idempotency-store.contract.js';
