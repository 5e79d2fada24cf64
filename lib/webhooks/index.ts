export * from './payment-event.types.js';
export * from './stores/idempotency-store.interface.js';
export * from './verifiers/webhook-verifier.interface.js';
