import { createHash } from 'node:crypto';
import { PaymentsConfigurationError, PaymentsInvalidArgumentError } from '../errors/payments.errors.js';
import { STORE_ARGUMENT_MESSAGES } from '../errors/payments.messages.js';

/** A result of `PostgresQueryable.query`: node-postgres' `QueryResult` has these fields. */
export interface PostgresQueryResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
  /** The command tag: `'ROLLBACK'` when a `COMMIT` found the transaction aborted. */
  command?: string;
}

/**
 * The part of a node-postgres `Pool` (or `PoolClient`, or `Client`) the PostgreSQL parts of this
 * package use. Declared here, rather than imported from `pg`, so that the package's types compile for
 * apps that do not install `pg` (an optional peer). Any `pg` 8 pool satisfies it.
 */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
}

/** A node-postgres queryable taking a query config: `name` makes it a prepared statement, per connection. */
export interface PreparedQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<PostgresQueryResult>;
}

/** The name of a prepared statement of this package: `prefix` and a hash of `text`, unique per text. */
export function preparedStatementName(prefix: string, text: string): string {
  return `${prefix}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** A `pg` pool: `PostgresQueryable` plus `connect()` for a dedicated client (transactions). */
export interface PostgresPool extends PostgresQueryable {
  connect(): Promise<PostgresPoolClient>;
}

/** A client checked out of a `pg` pool. `release(error)` destroys it instead of returning it to the pool. */
export interface PostgresPoolClient extends PostgresQueryable {
  release(error?: Error | boolean): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * `'payments_inbox'` -> `"payments_inbox"`, `'billing.inbox'` -> `"billing"."inbox"`. Only plain
 * identifiers (letters, digits, `_`, at most 63 characters, optionally schema-qualified) are accepted,
 * so a table option can never carry SQL.
 */
export function quotePostgresTable(table: string, option: string): string {
  const parts = typeof table === 'string' ? table.split('.') : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new PaymentsConfigurationError(
      option,
      'must be a table name of letters, digits and _ (at most 63 characters), optionally schema-qualified',
      "pass a name such as 'payments_idempotency' or 'billing.payments_idempotency'",
    );
  }
  return parts.map((part) => `"${part}"`).join('.');
}

/** `"billing"."inbox"` + `_expires_idx` -> `"inbox_expires_idx"` (an index lives in its table's schema). */
export function postgresIndexName(table: string, suffix: string): string {
  const name = table.split('.').pop()!;
  return `"${`${name}${suffix}`.slice(0, 63)}"`;
}

/**
 * A statement answering `ready = true` when the table and its `suffix` index both exist. Checked
 * before any DDL: `CREATE INDEX IF NOT EXISTS` takes a SHARE lock on the table before it looks, and so
 * would queue behind (and hold up) every transaction writing to it.
 */
export function postgresSchemaReadySql(table: string, indexSuffix: string): { text: string; values: string[] } {
  const parts = table.split('.');
  const schema = parts.length === 2 ? `"${parts[0]}".` : '';
  return {
    text: 'SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS ready',
    values: [quotePostgresTable(table, 'table'), `${schema}${postgresIndexName(table, indexSuffix)}`],
  };
}

/** SQLSTATEs of a concurrent `CREATE ... IF NOT EXISTS` losing a race on the catalog. */
const CREATE_RACE_CODES = new Set(['23505', '42P07', '42710']);

/** Runs a schema script; if two processes create it at once, the loser retries once (then it exists). */
export async function runPostgresSchema(
  db: PostgresQueryable,
  sql: string,
  ready?: { text: string; values: string[] },
): Promise<void> {
  if (ready !== undefined && (await db.query(ready.text, ready.values)).rows[0]?.['ready'] === true) return;
  try {
    await db.query(sql);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && CREATE_RACE_CODES.has(code)) {
      await db.query(sql);
      return;
    }
    throw error;
  }
}

/** A whole number of milliseconds >= 1, for SQL interval arithmetic. */
export function wholeMs(ms: number, where: string): number {
  if (!Number.isFinite(ms) || ms <= 0)
    throw new PaymentsInvalidArgumentError(where, 'duration', STORE_ARGUMENT_MESSAGES.positiveDurationMs);
  return Math.max(1, Math.ceil(ms));
}
