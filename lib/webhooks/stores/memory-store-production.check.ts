import { fail, kind } from '../../errors/payments-option.checks.js';
import { MemoryIdempotencyStore } from './memory-idempotency.store.js';

/**
 * Refuses, at boot, the in-memory idempotency store (the default, or one passed as `webhooks.store`)
 * when `NODE_ENV` is `production`, unless `webhooks.allowMemoryStoreInProduction` is true: each
 * instance of a production app that runs on several instances would keep its own claims, so a
 * redelivery reaching another instance runs the handler again, silently. A single-instance app opts in.
 * `webhooks` is the raw `webhooks` options object; `env` defaults to `process.env`.
 */
export function assertMemoryStoreAllowed(
  webhooks: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const allow = webhooks['allowMemoryStoreInProduction'];
  if (allow !== undefined && typeof allow !== 'boolean') {
    fail(
      'webhooks.allowMemoryStoreInProduction',
      `must be a boolean, got ${kind(allow)}`,
      'pass true (this app runs on one instance only), or omit it and use RedisIdempotencyStore / PostgresIdempotencyStore',
    );
  }
  if (env['NODE_ENV'] !== 'production' || allow === true) return;
  const store = webhooks['store'];
  if (store !== undefined && !(store instanceof MemoryIdempotencyStore)) return;
  fail(
    'webhooks.store',
    `is ${store === undefined ? 'the default in-memory store' : 'a MemoryIdempotencyStore'} while NODE_ENV=production: each instance of an app on several instances keeps its own claims, so a redelivery reaching another instance runs its handlers again`,
    'pass `store: new RedisIdempotencyStore(redis)` or `store: new PostgresIdempotencyStore(pool)` (shared by every instance), or set `webhooks.allowMemoryStoreInProduction: true` if this app runs on exactly one instance',
  );
}
