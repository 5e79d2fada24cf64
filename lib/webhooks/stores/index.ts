export * from '../contracts/idempotency-store.interface.js';
export * from './memory-idempotency.store.js';
export { RedisIdempotencyStore, type RedisIdempotencyStoreOptions } from './redis-idempotency.store.js';
export {
  PostgresIdempotencyStore,
  postgresIdempotencyStoreSchema,
  type PostgresIdempotencyStoreOptions,
} from './postgres-idempotency.store.js';
