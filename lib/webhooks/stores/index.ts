export * from './idempotency-store.interface.js';
export * from './memory-idempotency.store.js';
export * from './redis-idempotency.store.js';
