import { postgresIndexName, quotePostgresTable } from '../../postgres/postgres-sql.util.js';

/** Default table of `PostgresIdempotencyStore`. */
export const DEFAULT_POSTGRES_IDEMPOTENCY_TABLE = 'payments_idempotency';

/**
 * The SQL that creates the table of `PostgresIdempotencyStore` (idempotent: `IF NOT EXISTS`). Run it
 * from your migrations and pass `createTable: false`, or let the store run it on first use.
 *
 * Columns: `key` (`${eventId}:${handlerId}`), `owner` (token of the latest claim; null once released
 * or done), `lease_until` (end of the running claim's lease), `attempt` (claims granted), `done`,
 * `expires_at` (the row counts as absent after it; an index on it serves the clean-up).
 *
 * @example await pool.query(postgresIdempotencyStoreSchema('payments_idempotency'))
 */
export function postgresIdempotencyStoreSchema(table: string = DEFAULT_POSTGRES_IDEMPOTENCY_TABLE): string {
  const quoted = quotePostgresTable(table, 'PostgresIdempotencyStore table');
  return `CREATE TABLE IF NOT EXISTS ${quoted} (
  key text PRIMARY KEY,
  owner uuid,
  lease_until timestamptz,
  attempt integer NOT NULL,
  done boolean NOT NULL DEFAULT false,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${postgresIndexName(table, '_expires_at_idx')} ON ${quoted} (expires_at);`;
}

/**
 * The statements of `PostgresIdempotencyStore` on table `t` (already quoted). Time is PostgreSQL's
 * `clock_timestamp()`, so instances with skewed clocks agree on every lease and expiry.
 */
export function postgresIdempotencySql(
  t: string,
): Readonly<
  Record<'claim' | 'claimMany' | 'state' | 'complete' | 'completeMany' | 'release' | 'renew' | 'deleteExpired', string>
> {
  const now = 'clock_timestamp()';
  // A claim takes an existing row only when it is expired, released or its lease lapsed.
  const takeWhenFree = `ON CONFLICT (key) DO UPDATE SET
  owner = EXCLUDED.owner,
  lease_until = EXCLUDED.lease_until,
  attempt = CASE WHEN s.expires_at <= ${now} THEN 1 ELSE s.attempt + 1 END,
  done = false,
  expires_at = EXCLUDED.expires_at
WHERE s.expires_at <= ${now} OR (NOT s.done AND (s.lease_until IS NULL OR s.lease_until <= ${now}))`;
  return {
    // $1 key, $2 token, $3 lease ms, $4 state ttl ms. A row counts as absent once expired.
    claim: `INSERT INTO ${t} AS s (key, owner, lease_until, attempt, done, expires_at)
VALUES ($1, $2, ${now} + $3::float8 * interval '1 millisecond', 1, false, ${now} + $4::float8 * interval '1 millisecond')
${takeWhenFree}
RETURNING attempt`,
    // The claims of one turn of the event loop in one statement (PostgresStatementBatch): arrays of
    // keys, tokens, lease ms and state ttl ms; keys distinct, inserted in key order (two batches on
    // overlapping keys then lock rows in the same order, never a deadlock).
    claimMany: `INSERT INTO ${t} AS s (key, owner, lease_until, attempt, done, expires_at)
SELECT b.key, b.owner, ${now} + b.lease * interval '1 millisecond', 1, false, ${now} + b.ttl * interval '1 millisecond'
FROM unnest($1::text[], $2::uuid[], $3::float8[], $4::float8[]) AS b(key, owner, lease, ttl)
ORDER BY b.key
${takeWhenFree}
RETURNING key, attempt`,
    state: `SELECT done FROM ${t} WHERE key = $1 AND expires_at > ${now}`,
    // $1 key, $2 token, $3 retention ms.
    complete: `UPDATE ${t} SET done = true, owner = NULL, lease_until = NULL, expires_at = ${now} + $3::float8 * interval '1 millisecond'
WHERE key = $1 AND owner = $2 AND NOT done AND expires_at > ${now}`,
    // $1 keys, $2 tokens, $3 retention ms (arrays, keys distinct). The rows are locked first, in key
    // order (`l`, materialized before any row is updated), as the grouped claim inserts them: an UPDATE
    // ... FROM alone locks in whatever order its plan visits them, and two processes completing and
    // claiming overlapping keys then deadlock (40P01).
    completeMany: `WITH l AS MATERIALIZED (SELECT key FROM ${t} WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE)
UPDATE ${t} AS s SET done = true, owner = NULL, lease_until = NULL, expires_at = ${now} + b.retention * interval '1 millisecond'
FROM unnest($1::text[], $2::uuid[], $3::float8[]) AS b(key, owner, retention)
WHERE s.key = b.key AND s.key IN (SELECT key FROM l) AND s.owner = b.owner AND NOT s.done AND s.expires_at > ${now}`,
    release: `UPDATE ${t} SET owner = NULL, lease_until = NULL WHERE key = $1 AND owner = $2 AND NOT done`,
    // $1 key, $2 token, $3 lease ms. The row outlives the lease it extends.
    renew: `UPDATE ${t} SET lease_until = ${now} + $3::float8 * interval '1 millisecond',
  expires_at = GREATEST(expires_at, ${now} + $3::float8 * interval '1 millisecond')
WHERE key = $1 AND owner = $2 AND NOT done AND expires_at > ${now}`,
    // $1 batch size. The sub-select walks the expires_at index from its oldest end.
    deleteExpired: `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE expires_at <= ${now} ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
  };
}
