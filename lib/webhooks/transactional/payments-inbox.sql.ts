import { postgresIndexName, quotePostgresTable } from '../../postgres/postgres-sql.util.js';
import { DEFAULT_PAYMENTS_INBOX_TABLE } from './payments-transactions.options.js';
import { MAX_DONE_PER_SLOT } from '../records/run-record.js';

/**
 * The SQL that creates the inbox table of transactional handlers (idempotent: `IF NOT EXISTS`). Run
 * it from your migrations and pass `webhooks.transactions.createTable: false`, or let the module run
 * it on the first transactional delivery. One row per handler slot of a record (`key`:
 * `<record key>/<slot>`, e.g. `i:<intent id>/succeeded|Orders.paid`, as the idempotency store keeps
 * it): `done` (the events whose run committed, `*` for a retrieve's run that no webhook of its state
 * has matched yet), `run` (the token of the latest transaction that ran the handler), `completed_at`,
 * `expires_at` (the retention; an index serves the clean-up).
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
  done text[] NOT NULL,
  run text,
  completed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
)`,
    `CREATE INDEX IF NOT EXISTS ${postgresIndexName(table, '_expires_at_idx')} ON ${quoted} (expires_at)`,
  ];
}

/** The inbox's statements on `table` (internal; `PaymentsInbox` and the bench use them). */
export interface PaymentsInboxSql {
  /**
   * $1 key, $2 the run's event id (`*` for a retrieve's run), $3 retention ms, $4 this transaction's
   * token, $5 whether the slot's state may recur (`requires_*`). Takes `pg_try_advisory_xact_lock` on the key (never waits): no row when another transaction
   * holds it (a copy in flight: busy). Otherwise one row, `runs`: true when the handler is to run now
   * (the event is new to the slot: recorded, committed with the handler's writes), false when the run
   * already happened (any run of the slot; for a state that may recur, this event, or a retrieve's run
   * of the state, which then becomes this event's, or for a retrieve's run, any run). An expired row
   * counts as absent.
   */
  readonly claim: string;
  /** Deletes up to 500 expired records, oldest first (the `expires_at` index), skipping locked ones. */
  readonly cleanup: string;
}

/** The statements of `PaymentsInbox` on `table` (quoted here, validated as `webhooks.transactions.table`). */
export function paymentsInboxSql(table: string): PaymentsInboxSql {
  const t = quotePostgresTable(table, 'webhooks.transactions.table');
  const now = 'clock_timestamp()';
  const expired = `r.expires_at <= ${now}`;
  // The run happened: any run of a state that does not recur (not requires_*: `$5` false), else this
  // event, a retrieve's run of its state (absorbed), or for a retrieve any run.
  const happened = `(NOT $5::boolean OR $2 = ANY(r.done) OR '*' = ANY(r.done) OR $2 = '*')`;
  return {
    // No CTE: one INSERT ... SELECT whose WHERE is the lock (evaluated once: one candidate row). Under
    // the lock, ON CONFLICT reads the latest committed row, whoever wrote it.
    claim: `INSERT INTO ${t} AS r (key, done, run, completed_at, expires_at)
SELECT $1, ARRAY[$2::text], $4, ${now}, ${now} + $3::float8 * interval '1 millisecond'
WHERE pg_try_advisory_xact_lock(hashtextextended($1, 0))
ON CONFLICT (key) DO UPDATE SET
  done = CASE
    WHEN ${expired} THEN EXCLUDED.done
    WHEN NOT $5::boolean OR $2 = ANY(r.done) OR $2 = '*' THEN r.done
    WHEN '*' = ANY(r.done) THEN array_replace(r.done, '*', $2::text)
    ELSE (r.done || $2::text)[greatest(1, cardinality(r.done) - ${MAX_DONE_PER_SLOT - 2}):]
  END,
  run = CASE WHEN ${expired} OR NOT ${happened} THEN EXCLUDED.run ELSE r.run END,
  completed_at = CASE WHEN ${expired} OR NOT ${happened} THEN EXCLUDED.completed_at ELSE r.completed_at END,
  expires_at = CASE WHEN ${expired} OR NOT ${happened} THEN EXCLUDED.expires_at ELSE r.expires_at END
RETURNING r.run IS NOT DISTINCT FROM $4 AS runs`,
    cleanup: `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE expires_at <= ${now} ORDER BY expires_at LIMIT 500 FOR UPDATE SKIP LOCKED) RETURNING 1 AS deleted`,
  };
}
