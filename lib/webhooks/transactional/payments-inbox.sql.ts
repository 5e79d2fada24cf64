import { postgresIndexName, quotePostgresTable } from '../../postgres/postgres-sql.util.js';
import { DEFAULT_PAYMENTS_INBOX_TABLE } from './payments-transactions.options.js';

/**
 * The SQL that creates the inbox table of transactional handlers (idempotent: `IF NOT EXISTS`). Run
 * it from your migrations and pass `webhooks.transactions.createTable: false`, or let the module run
 * it on the first transactional delivery. One row per completed handler run: `key` (the run's first
 * claim key: `${eventId}:${handlerId}`, or for an intent's terminal state, the occurrence the
 * reconciler shares, `payment_intent:${intentId}:${state}:${handlerId}`), `completed_at`, `expires_at`
 * (the retention; an index serves the clean-up).
 *
 * @example await pool.query(paymentsInboxSchema())
 */
export function paymentsInboxSchema(table: string = DEFAULT_PAYMENTS_INBOX_TABLE): string {
  return inboxSchemaStatements(table).join(';\n') + ';';
}

/** The statements of `paymentsInboxSchema`, one by one. */
export function inboxSchemaStatements(table: string): [string, string] {
  const quoted = quotePostgresTable(table, 'webhooks.transactions.table');
  return [
    `CREATE TABLE IF NOT EXISTS ${quoted} (
  key text PRIMARY KEY,
  completed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${postgresIndexName(table, '_expires_at_idx')} ON ${quoted} (expires_at)`,
  ];
}

/** The inbox's statements on `table` (internal; `PaymentsInbox` and the bench use them). */
export interface PaymentsInboxSql {
  /**
   * $1 key, $2 retention ms. Takes `pg_try_advisory_xact_lock` on the key (never waits) and, only if
   * granted, inserts the record unless a live one exists (an expired one is taken over). One row
   * (`inserted`) when both happened: the handler runs. No row says only "not both": a copy in flight
   * holds the lock, or the record is live; `claimFlags` then tells which.
   */
  readonly claim: string;
  /**
   * $1 key, $2 retention ms. The same claim, answering both flags in one row: `locked` (the advisory
   * lock; a transaction that already holds it gets it again) and `inserted` (0 or 1). Sent only after
   * `claim` answered no row (a redelivery the store forgot, or a copy in flight): `claim` then changed
   * nothing but, at most, the lock, which this takes again.
   */
  readonly claimFlags: string;
  /** Deletes up to 500 expired records, oldest first (the `expires_at` index), skipping locked ones. */
  readonly cleanup: string;
}

/** The statements of `PaymentsInbox` on `table` (quoted here, validated as `webhooks.transactions.table`). */
export function paymentsInboxSql(table: string): PaymentsInboxSql {
  const t = quotePostgresTable(table, 'webhooks.transactions.table');
  const lock = 'pg_try_advisory_xact_lock(hashtextextended($1, 0))';
  const values = `$1, clock_timestamp(), clock_timestamp() + $2::float8 * interval '1 millisecond'`;
  const takeExpired = `ON CONFLICT (key) DO UPDATE SET completed_at = EXCLUDED.completed_at, expires_at = EXCLUDED.expires_at
  WHERE r.expires_at <= clock_timestamp()`;
  return {
    // No CTE: one INSERT ... SELECT whose WHERE is the lock (evaluated once: one candidate row).
    claim: `INSERT INTO ${t} AS r (key, completed_at, expires_at)
SELECT ${values} WHERE ${lock}
${takeExpired}
RETURNING true AS inserted`,
    // `l` is evaluated once (volatile, referenced twice: materialized).
    claimFlags: `WITH l AS MATERIALIZED (SELECT ${lock} AS locked),
ins AS (
  INSERT INTO ${t} AS r (key, completed_at, expires_at)
  SELECT ${values} FROM l WHERE l.locked
  ${takeExpired}
  RETURNING 1
)
SELECT (SELECT locked FROM l) AS locked, (SELECT count(*) FROM ins)::int AS inserted`,
    cleanup: `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE expires_at <= clock_timestamp() ORDER BY expires_at LIMIT 500 FOR UPDATE SKIP LOCKED) RETURNING 1 AS deleted`,
  };
}
