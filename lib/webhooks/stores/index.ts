export * from './idempotency-store.interface.js';
export * from './memory-idempotency.store.js';
export * from './redis-idempotency.store.js';
export * from './postgres-idempotency.store.js';
export type { PostgresPool, PostgresPoolClient, PostgresQueryable, PostgresQueryResult } from './postgres-sql.util.js';
