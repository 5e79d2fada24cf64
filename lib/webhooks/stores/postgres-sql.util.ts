import { PaymentsConfigurationError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import { STORE_ARGUMENT_MESSAGES } from '../payments-webhooks.messages.js';

/** A result of `PostgresQueryable.query`: node-postgres' `QueryResult` has these fields. */
export interface PostgresQueryResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/**
 * The part of a node-postgres `Pool` (or `PoolClient`, or `Client`) the PostgreSQL parts of this
 * package use. Declared here, rather than imported from `pg`, so that the package's types compile for
 * apps that do not install `pg` (an optional peer). Any `pg` 8 pool satisfies it.
 */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
}

/** A `pg` pool: `PostgresQueryable` plus `connect()` for a dedicated client (transactions). */
export interface PostgresPool extends PostgresQueryable {
  connect(): Promise<PostgresPoolClient>;
}

/** A client checked out of a `pg` pool. `release(error)` destroys it instead of returning it to the pool. */
export interface PostgresPoolClient extends PostgresQueryable {
  release(error?: Error | boolean): void;
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

/** SQLSTATEs of a concurrent `CREATE ... IF NOT EXISTS` losing a race on the catalog. */
const CREATE_RACE_CODES = new Set(['23505', '42P07', '42710']);

/** Runs a schema script; if two processes create it at once, the loser retries once (then it exists). */
export async function runPostgresSchema(db: PostgresQueryable, sql: string): Promise<void> {
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
  if (!Number.isFinite(ms) || ms <= 0) throw new PaymentsInvalidArgumentError(where, 'duration', STORE_ARGUMENT_MESSAGES.positiveDurationMs);
  return Math.max(1, Math.ceil(ms));
}
