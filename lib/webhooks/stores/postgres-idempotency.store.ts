import { randomUUID } from 'node:crypto';
import { DEFAULT_RETENTION_SECONDS } from '../../core/payments.defaults.js';
import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import type { IdempotencyClaim, IdempotencyStore } from '../contracts/idempotency-store.interface.js';
import {
  preparedStatementName,
  postgresSchemaReadySql,
  quotePostgresTable,
  runPostgresSchema,
  wholeMs,
  type PostgresQueryable,
  type PostgresQueryResult,
  type PreparedQueryable,
} from '../../postgres/postgres-sql.util.js';
import { isConnectionEnded, watchPostgresPoolErrors } from '../../postgres/postgres-pool-errors.js';
import {
  DEFAULT_POSTGRES_IDEMPOTENCY_TABLE,
  postgresIdempotencySql,
  postgresIdempotencyStoreSchema,
} from './postgres-idempotency.sql.js';
import { postgresIdempotencyStatements, type PostgresIdempotencyStatements } from './postgres-idempotency.batches.js';
import { intentWatchTable, PostgresIntentWatchStore } from './postgres-intent-watch.store.js';

export { DEFAULT_POSTGRES_IDEMPOTENCY_TABLE, postgresIdempotencyStoreSchema } from './postgres-idempotency.sql.js';

/** The statements a delivery runs (the ones sent prepared). */
type PerDeliveryStatement = 'claim' | 'claimMany' | 'state' | 'complete' | 'completeMany' | 'release' | 'renew';

/** Options of `PostgresIdempotencyStore`. */
export interface PostgresIdempotencyStoreOptions {
  /**
   * Table of the claims, optionally schema-qualified (`'billing.payments_idempotency'`). Default
   * `'payments_idempotency'`. All instances of one app must use the same table.
   */
  table?: string;
  /**
   * Create the table and its index on first use (`CREATE TABLE IF NOT EXISTS`). Default true. Pass
   * false when your migrations run `postgresIdempotencyStoreSchema()` themselves and the app's role
   * may not run DDL.
   */
  createTable?: boolean;
  /**
   * How long the attempt count of a key that never completes is kept, in seconds. Default
   * `DEFAULT_RETENTION_SECONDS` (3 days). A completed key is kept for its retention instead.
   */
  attemptsTtlSeconds?: number;
  /**
   * Expired rows are deleted in the background, one batch (an index range on `expires_at`, never a
   * full scan) every `cleanupEvery` claims. Default 500; 0 turns the background clean-up off (call
   * `deleteExpired()` from your own job).
   */
  cleanupEvery?: number;
  /** Rows deleted per background batch. Default 1000. */
  cleanupBatchSize?: number;
  /**
   * Send the per-delivery statements (claim, state, complete, release) as named prepared statements
   * (`pool.query({ name, text, values })`), so PostgreSQL parses and plans each once per connection
   * instead of once per delivery. Default true: any `pg` pool, client or pool client takes it. Pass
   * false for a queryable that only accepts `(text, values)`, or behind PgBouncer in transaction
   * pooling mode older than 1.21 (or without `max_prepared_statements`).
   */
  preparedStatements?: boolean;
  /**
   * Group the claims (and the completions) made in the same turn of the event loop into one statement
   * over arrays: under load one round trip serves several deliveries. Default true; false sends one
   * statement per call. Semantics are the same either way (a lone call goes as the one-row statement).
   */
  batchStatements?: boolean;
}

/**
 * `IdempotencyStore` on PostgreSQL, for apps that have PostgreSQL but no Redis: every instance that
 * points at the same database (and table) shares the claims, so a handler runs once in total.
 *
 * One statement per call, timed by the database's clock (so instances with skewed clocks agree):
 * `claim` is an `INSERT ... ON CONFLICT DO UPDATE ... WHERE` that takes the row only when it is absent,
 * expired, released or its lease lapsed, so concurrent deliveries on any number of instances get
 * exactly one `claimed`. `complete`, `release` and `renew` are `UPDATE`s guarded by the caller's token: an
 * owner whose lease lapsed still owns the claim until another delivery claims it, as with
 * `RedisIdempotencyStore`. Database errors are never swallowed: they reject, and the receiver answers
 * 503 without running anything.
 *
 * Expired rows count as absent at once and are deleted later, in small batches by an index range on
 * `expires_at` (see `cleanupEvery`), never by a scan per delivery. The pool belongs to the caller: the
 * store does not end it.
 *
 * @example
 * const pool = new Pool({ connectionString: process.env.DATABASE_URL });
 * pool.on('error', (error) => logger.warn(error.message)); // the store listens too: a restart never crashes
 * PaymentsModule.forRoot({ ..., webhooks: { verifier, store: new PostgresIdempotencyStore(pool) } })
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  /** The table, quoted for SQL. */
  readonly table: string;
  readonly #attemptsTtlMs: number;
  readonly #cleanupEvery: number;
  readonly #cleanupBatchSize: number;
  readonly #sql: Readonly<Record<PerDeliveryStatement | 'deleteExpired', string>>;
  /** Names of the per-delivery statements, unless `preparedStatements` is false (then they go as text). */
  readonly #names: Readonly<Record<PerDeliveryStatement, string>> | undefined;
  readonly #schemaSql: string | undefined;
  readonly #schemaReady: { text: string; values: string[] };
  #schema: Promise<void> | undefined;
  readonly #statements: PostgresIdempotencyStatements;
  #claimsSinceCleanup = 0;
  #cleanup: Promise<unknown> | undefined;

  constructor(
    private readonly pool: PostgresQueryable,
    options: PostgresIdempotencyStoreOptions = {},
  ) {
    if (pool === null || typeof pool !== 'object' || typeof (pool as { query?: unknown }).query !== 'function') {
      throw new PaymentsConfigurationError(
        'PostgresIdempotencyStore pool',
        'is not a node-postgres pool',
        'pass a pg Pool: new PostgresIdempotencyStore(new Pool({ connectionString }))',
      );
    }
    watchPostgresPoolErrors(pool);
    const table = options.table ?? DEFAULT_POSTGRES_IDEMPOTENCY_TABLE;
    this.table = quotePostgresTable(table, 'PostgresIdempotencyStore table');
    this.#attemptsTtlMs =
      positiveInteger(options.attemptsTtlSeconds, DEFAULT_RETENTION_SECONDS, 'attemptsTtlSeconds') * 1000;
    this.#cleanupEvery = wholeNumber(options.cleanupEvery, 500, 'cleanupEvery');
    this.#cleanupBatchSize = positiveInteger(options.cleanupBatchSize, 1000, 'cleanupBatchSize');
    if (options.createTable === false) this.#schema = Promise.resolve();
    else this.#schemaSql = postgresIdempotencyStoreSchema(table);
    this.#schemaReady = postgresSchemaReadySql(table, '_expires_at_idx');
    const t = this.table;
    this.#sql = postgresIdempotencySql(t);
    for (const [option, fix] of [
      [
        'preparedStatements',
        'omit it (true: named prepared statements), or pass false for a pool that takes only (text, values)',
      ],
      ['batchStatements', 'omit it (true: the calls of one event-loop turn share a statement), or pass false'],
    ] as const) {
      if (options[option] !== undefined && typeof options[option] !== 'boolean') {
        throw new PaymentsConfigurationError(`PostgresIdempotencyStore ${option}`, 'must be true or false', fix);
      }
    }
    this.#statements = postgresIdempotencyStatements(
      (part, values) => this.run(part, values),
      options.batchStatements !== false,
    );
    // Named after the text (table included), so two stores on two tables never share a name on a connection.
    const name = (part: PerDeliveryStatement): string =>
      preparedStatementName(`payments_idem_${part}`, this.#sql[part]);
    this.#names =
      options.preparedStatements === false
        ? undefined
        : {
            claim: name('claim'),
            claimMany: name('claimMany'),
            state: name('state'),
            complete: name('complete'),
            completeMany: name('completeMany'),
            release: name('release'),
            renew: name('renew'),
          };
  }

  /**
   * One per-delivery statement: named (prepared once per connection) unless `preparedStatements` is false.
   * Sent once more when its connection had ended (`isConnectionEnded`: one the server ended while idle in
   * the pool): every statement here is token-guarded or a claim, so a repeat at worst answers busy.
   */
  private run(part: PerDeliveryStatement, values: unknown[]): Promise<PostgresQueryResult> {
    return this.runOnce(part, values).catch((error: unknown) => {
      if (!isConnectionEnded(error)) throw error;
      return this.runOnce(part, values);
    });
  }

  private runOnce(part: PerDeliveryStatement, values: unknown[]): Promise<PostgresQueryResult> {
    const text = this.#sql[part];
    if (this.#names === undefined) return this.pool.query(text, values);
    return (this.pool as unknown as PreparedQueryable).query({ name: this.#names[part], text, values });
  }

  async claim(key: string, leaseMs: number): Promise<IdempotencyClaim> {
    return this.claimOnce(key, leaseMs, true);
  }

  private async claimOnce(key: string, leaseMs: number, retry: boolean): Promise<IdempotencyClaim> {
    await this.ensureSchema();
    const lease = wholeMs(leaseMs, 'PostgresIdempotencyStore');
    const token = randomUUID();
    const ttlMs = Math.max(this.#attemptsTtlMs, lease);
    const attempt = await this.#statements.claim({ key, token, leaseMs: lease, ttlMs });
    this.maybeCleanUp();
    if (attempt !== undefined) return { status: 'claimed', token, attempt };
    // Not taken: it is done, or leased by someone else. (A row another claim inserted concurrently is
    // only visible to a new statement, hence this second one.)
    const state = await this.run('state', [key]);
    const current = state.rows[0];
    if (current === undefined) {
      // Expired (or deleted by the clean-up) in between: one more try, then say busy (the service retries).
      return retry ? this.claimOnce(key, leaseMs, false) : { status: 'busy' };
    }
    return current['done'] === true ? { status: 'done' } : { status: 'busy' };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<void> {
    await this.ensureSchema();
    await this.#statements.complete({ key, token, retentionMs: wholeMs(retentionMs, 'PostgresIdempotencyStore') });
  }

  async release(key: string, token: string): Promise<void> {
    await this.ensureSchema();
    await this.run('release', [key, token]);
  }

  /** Extends the lease of `token` on `key` (one owner-checked UPDATE); false when the lease is lost. */
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    await this.ensureSchema();
    const renewed = await this.run('renew', [key, token, wholeMs(leaseMs, 'PostgresIdempotencyStore')]);
    return renewed.rowCount === 1;
  }

  /**
   * One round trip (`SELECT 1`) through the pool, for health checks (`nestjs-payments/health`). Rejects
   * when the database does not answer (or the pool cannot connect). Does not create the table.
   */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /**
   * Deletes up to `limit` expired rows (oldest first, by the `expires_at` index) and resolves to how
   * many went. The store calls it in the background; call it from a job if `cleanupEvery` is 0.
   */
  async deleteExpired(limit: number = this.#cleanupBatchSize): Promise<number> {
    await this.ensureSchema();
    const result = await this.pool.query(this.#sql.deleteExpired, [limit]);
    return result.rowCount ?? 0;
  }

  /** Waits for a background clean-up batch, if one runs. The pool belongs to the caller: it stays open. */
  /**
   * The reconciler's watch list of one module instance in the same database: table
   * `payments_watched_intents`, or `intentWatchTable(instance)` for a named instance.
   */
  intentWatchStore(instance?: string): PostgresIntentWatchStore {
    return new PostgresIntentWatchStore(this.pool, { table: intentWatchTable(instance) });
  }

  async close(): Promise<void> {
    await this.#cleanup;
  }

  /** Creates the table once per store (concurrent first calls share one attempt; a failure is retried on the next call). */
  private ensureSchema(): Promise<void> {
    if (this.#schema !== undefined) return this.#schema;
    const created = runPostgresSchema(this.pool, this.#schemaSql!, this.#schemaReady);
    this.#schema = created;
    created.catch(() => {
      if (this.#schema === created) this.#schema = undefined;
    });
    return created;
  }

  /** One batch every `cleanupEvery` claims, never two at once, its errors ignored (the next batch retries). */
  private maybeCleanUp(): void {
    if (this.#cleanupEvery === 0 || this.#cleanup !== undefined) return;
    if (++this.#claimsSinceCleanup < this.#cleanupEvery) return;
    this.#claimsSinceCleanup = 0;
    this.#cleanup = this.deleteExpired()
      .catch(() => 0)
      .finally(() => {
        this.#cleanup = undefined;
      });
  }
}

function positiveInteger(value: number | undefined, fallback: number, option: string): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 1) {
    throw new PaymentsConfigurationError(
      `PostgresIdempotencyStore ${option}`,
      'must be a whole number >= 1',
      `pass a whole number, or omit it for ${fallback}`,
    );
  }
  return n;
}

function wholeNumber(value: number | undefined, fallback: number, option: string): number {
  const n = value ?? fallback;
  if (!Number.isInteger(n) || n < 0) {
    throw new PaymentsConfigurationError(
      `PostgresIdempotencyStore ${option}`,
      'must be a whole number >= 0',
      `pass a whole number (0 turns it off), or omit it for ${fallback}`,
    );
  }
  return n;
}
