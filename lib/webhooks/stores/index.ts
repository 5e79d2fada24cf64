export * from './idempotency-store.interface.js';
