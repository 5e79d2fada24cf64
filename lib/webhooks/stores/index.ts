export * from './idempotency-store.interface.js';
export * from './redis-idempotency.store.js';
