export * from './idempotency-store.interface.js';
export * from './memory-idempotency.store.js';
export * from './redis-idempotency.store.js';
export {
  PostgresIdempotencyStore,
  postgresIdempotencyStoreSchema,
  type PostgresIdempotencyStoreOptions,
} from './postgres-idempotency.store.js';
export type { PostgresPool } from './postgres-sql.util.js';
