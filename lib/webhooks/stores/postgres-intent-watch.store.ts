import { createHash } from 'node:crypto';
import { quotePostgresTable, runPostgresSchema, type PostgresQueryable } from '../../postgres/postgres-sql.util.js';
import type { IntentWatchStore, WatchedIntent, WatchedIntentKind } from '../contracts/intent-watch-store.interface.js';

/** Default table of the watched intents; the lease lives in `<table>_lease`. */
export const DEFAULT_INTENT_WATCH_TABLE = 'payments_watched_intents';

/**
 * The watch table of a module instance: `payments_watched_intents` for the unnamed one,
 * `payments_watched_intents_<name>` for a named one (lower case; a name with other characters than
 * `a-z 0-9 _`, or a long one, gets them replaced and a hash of the name appended, so two names never
 * share a table).
 */
export function intentWatchTable(instance?: string): string {
  if (instance === undefined) return DEFAULT_INTENT_WATCH_TABLE;
  const plain = instance.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const suffix =
    plain === instance && plain.length <= 30
      ? plain
      : `${plain.slice(0, 20)}_${createHash('sha256').update(instance).digest('hex').slice(0, 8)}`;
  return `${DEFAULT_INTENT_WATCH_TABLE}_${suffix}`;
}

/**
 * The SQL that creates the tables of `PostgresIntentWatchStore` (idempotent: `IF NOT EXISTS`). Run it
 * from your migrations and pass `createTable: false`, or let the store run it on first use. The
 * partial index `<table>_fresh` (intents never checked, read first) is new after 0.1.0: on a large existing
 * table create it beforehand with `CREATE INDEX CONCURRENTLY` (docs/reconciliation.md).
 */
export function intentWatchSchema(table: string = DEFAULT_INTENT_WATCH_TABLE): string {
  const t = quotePostgresTable(table, 'table');
  const lease = quotePostgresTable(`${table}_lease`, 'table');
  const index = quotePostgresTable(`${table.split('.').pop()!}_due`, 'table');
  const fresh = quotePostgresTable(`${table.split('.').pop()!}_fresh`, 'table');
  return `CREATE TABLE IF NOT EXISTS ${t} (
  id text PRIMARY KEY,
  kind text NOT NULL,
  created_at_ms bigint NOT NULL,
  next_check_ms bigint NOT NULL,
  checks integer NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ${index} ON ${t} (next_check_ms);
CREATE INDEX IF NOT EXISTS ${fresh} ON ${t} (next_check_ms) WHERE checks = 0;
CREATE TABLE IF NOT EXISTS ${lease} (
  name text PRIMARY KEY,
  owner text NOT NULL,
  until timestamptz NOT NULL
);`;
}

/**
 * The reconciler's watch list on PostgreSQL, beside `PostgresIdempotencyStore` (give it the same pool):
 * one row per watched intent, and a one-row lease table timed by PostgreSQL's clock (so instances with
 * skewed clocks agree on who sweeps).
 */
export class PostgresIntentWatchStore implements IntentWatchStore {
  readonly #table: string;
  readonly #lease: string;
  readonly #schema: string;
  readonly #createTable: boolean;
  #ready: Promise<void> | undefined;

  constructor(
    private readonly pool: PostgresQueryable,
    options: { table?: string; createTable?: boolean } = {},
  ) {
    const table = options.table ?? DEFAULT_INTENT_WATCH_TABLE;
    this.#table = quotePostgresTable(table, 'PostgresIntentWatchStore table');
    this.#lease = quotePostgresTable(`${table}_lease`, 'PostgresIntentWatchStore table');
    this.#schema = intentWatchSchema(table);
    this.#createTable = options.createTable !== false;
  }

  async watch(intent: WatchedIntent): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.#table} (id, kind, created_at_ms, next_check_ms, checks) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
      [intent.id, intent.kind, intent.createdAt, intent.nextCheckAt, intent.checks],
    );
  }

  async due(now: number, limit: number): Promise<WatchedIntent[]> {
    const { rows } = await this.#query(
      // Never-checked intents first (their partial index), then the rest, each in due order.
      `SELECT id, kind, created_at_ms, next_check_ms, checks FROM (
(SELECT 0 AS lane, * FROM ${this.#table} WHERE checks = 0 AND next_check_ms <= $1 ORDER BY next_check_ms LIMIT $2)
UNION ALL
(SELECT 1 AS lane, * FROM ${this.#table} WHERE checks <> 0 AND next_check_ms <= $1 ORDER BY next_check_ms LIMIT $2)
) due ORDER BY lane, next_check_ms LIMIT $2`,
      [now, limit],
    );
    return rows.map((row) => ({
      id: String(row['id']),
      kind: row['kind'] as WatchedIntentKind,
      createdAt: Number(row['created_at_ms']),
      nextCheckAt: Number(row['next_check_ms']),
      checks: Number(row['checks']),
    }));
  }

  async reschedule(id: string, nextCheckAt: number, checks: number): Promise<void> {
    await this.#query(`UPDATE ${this.#table} SET next_check_ms = $2, checks = $3 WHERE id = $1`, [
      id,
      nextCheckAt,
      checks,
    ]);
  }

  async forget(id: string): Promise<void> {
    await this.#query(`DELETE FROM ${this.#table} WHERE id = $1`, [id]);
  }

  async lease(owner: string, ms: number): Promise<boolean> {
    const { rows } = await this.#query(
      `INSERT INTO ${this.#lease} AS l (name, owner, until) VALUES ('sweeper', $1, clock_timestamp() + $2::float8 * interval '1 millisecond')
ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, until = EXCLUDED.until
WHERE l.owner = EXCLUDED.owner OR l.until <= clock_timestamp()
RETURNING owner`,
      [owner, ms],
    );
    return rows.length === 1;
  }

  async list(): Promise<WatchedIntent[]> {
    return this.due(Number.MAX_SAFE_INTEGER, 10_000);
  }

  async #query(text: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> {
    if (this.#createTable) {
      this.#ready ??= runPostgresSchema(this.pool, this.#schema).catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      });
      await this.#ready;
    }
    return this.pool.query(text, values) as Promise<{ rows: Array<Record<string, unknown>> }>;
  }
}
