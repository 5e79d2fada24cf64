import { runPostgresSchema, type PostgresQueryable } from '../../postgres/postgres-sql.util.js';
import type { IntentWatchStore, WatchedIntent, WatchedIntentKind } from '../contracts/intent-watch-store.interface.js';
import { intentRecordKey } from '../records/record-keys.js';
import {
  DEFAULT_POSTGRES_IDEMPOTENCY_TABLE,
  postgresIdempotencyStoreSchema,
  postgresWatchSql,
  type PostgresWatchSql,
} from './postgres-idempotency.sql.js';

/** Options of `PostgresIntentWatchStore`. */
export interface PostgresIntentWatchStoreOptions {
  /** The table of the `PostgresIdempotencyStore` whose records hold the list. Default `'payments_idempotency'`. */
  table?: string;
  /** The module instance whose list it is (its name; undefined for the unnamed one). */
  instance?: string;
  /** How long a watched intent's row is kept at least (ms). Default 8 days. */
  watchTtlMs?: number;
  /**
   * Create the records' schema on first use (`postgresIdempotencyStoreSchema`), as the
   * `PostgresIdempotencyStore` on that table does. Default true; false when migrations create it.
   */
  createTable?: boolean;
  /** @internal Resolves once the schema exists (the idempotency store that made this list creates it). */
  ready?: () => Promise<void>;
}

/**
 * The reconciler's watch list on PostgreSQL, kept by `PostgresIdempotencyStore` in its own rows: an
 * intent's record says whether it is watched, for which instance (`watch_scope`, a value, so that no
 * instance's name ever reaches a table name), and when it is next due (partial indexes by instance
 * and next check, never-checked intents first). The completion of a terminal state's run ends the
 * watch in the same statement. One sweeper lease per instance in `<table>_lease`, timed by
 * PostgreSQL's clock (so instances with skewed clocks agree on who sweeps).
 */
export class PostgresIntentWatchStore implements IntentWatchStore {
  readonly inRecords = true;
  readonly #sql: PostgresWatchSql;
  readonly #scope: string;
  readonly #keyPrefix: string;
  readonly #watchTtlMs: number;
  readonly #ready: () => Promise<void>;

  constructor(
    private readonly pool: PostgresQueryable,
    options: PostgresIntentWatchStoreOptions = {},
  ) {
    this.#sql = postgresWatchSql(options.table ?? DEFAULT_POSTGRES_IDEMPOTENCY_TABLE);
    this.#scope = options.instance ?? '';
    this.#keyPrefix = options.instance === undefined ? '' : `${options.instance}:`;
    this.#watchTtlMs = options.watchTtlMs ?? 8 * 86_400_000;
    const table = options.table ?? DEFAULT_POSTGRES_IDEMPOTENCY_TABLE;
    let created: Promise<void> | undefined;
    this.#ready =
      options.ready ??
      (options.createTable === false
        ? () => Promise.resolve()
        : () =>
            (created ??= runPostgresSchema(pool, postgresIdempotencyStoreSchema(table)).catch((error: unknown) => {
              created = undefined;
              throw error;
            })));
  }

  async watch(intent: WatchedIntent): Promise<void> {
    await this.#query(this.#sql.watch, [
      intentRecordKey(this.#keyPrefix, intent.id),
      this.#scope,
      intent.kind,
      intent.createdAt,
      intent.nextCheckAt,
      intent.checks,
      this.#watchTtlMs,
    ]);
  }

  async due(now: number, limit: number): Promise<WatchedIntent[]> {
    const { rows } = await this.#query(this.#sql.due, [this.#scope, now, limit]);
    return rows.map((row) => ({
      id: String(row['key']).slice(-36),
      kind: row['watch_kind'] as WatchedIntentKind,
      createdAt: Number(row['watch_created_ms']),
      nextCheckAt: Number(row['watch_next_ms']),
      checks: Number(row['watch_checks']),
    }));
  }

  async reschedule(id: string, nextCheckAt: number, checks: number): Promise<void> {
    await this.#query(this.#sql.reschedule, [intentRecordKey(this.#keyPrefix, id), nextCheckAt, checks]);
  }

  async forget(id: string): Promise<void> {
    await this.#query(this.#sql.forget, [intentRecordKey(this.#keyPrefix, id)]);
  }

  async lease(owner: string, ms: number): Promise<boolean> {
    const { rows } = await this.#query(this.#sql.lease, [this.#scope, owner, ms]);
    return rows.length === 1;
  }

  async list(): Promise<WatchedIntent[]> {
    return this.due(Number.MAX_SAFE_INTEGER, 10_000);
  }

  async #query(text: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> {
    await this.#ready();
    return this.pool.query(text, values);
  }
}
