import { randomUUID } from 'node:crypto';
import { DEFAULT_RETENTION_SECONDS } from '../../core/payments.defaults.js';
import { PaymentsConfigurationError, PaymentsError } from '../../errors/payments.errors.js';
import type {
  HandledState,
  IdempotencyClaim,
  IdempotencyStore,
  RunClaimRequest,
  RunCompletion,
  RunRelease,
  RunRenewal,
} from '../contracts/idempotency-store.interface.js';
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
import {
  endedConnectionRetries,
  isConnectionEnded,
  watchPostgresPoolErrors,
} from '../../postgres/postgres-pool-errors.js';
import {
  DEFAULT_POSTGRES_IDEMPOTENCY_TABLE,
  postgresIdempotencySql,
  postgresIdempotencyStoreSchema,
  postgresNameBeside,
  type PostgresIdempotencySql,
} from './postgres-idempotency.sql.js';
import {
  postgresIdempotencyStatements,
  type ClaimRow,
  type PostgresIdempotencyStatements,
} from './postgres-idempotency.batches.js';
import { PostgresIntentWatchStore } from './postgres-intent-watch.store.js';
import { handledOfSlots } from '../records/record-keys.js';

export { DEFAULT_POSTGRES_IDEMPOTENCY_TABLE, postgresIdempotencyStoreSchema } from './postgres-idempotency.sql.js';

/** The statements a delivery runs (the ones sent prepared). */
type PerDeliveryStatement = 'claim' | 'claimMany' | 'complete' | 'completeMany' | 'release' | 'renew';

const NOTHING_HANDLED: readonly HandledState[] = Object.freeze([]);
const DONE: IdempotencyClaim = Object.freeze({ status: 'done' });
const BUSY: IdempotencyClaim = Object.freeze({ status: 'busy' });

/** Options of `PostgresIdempotencyStore`. */
export interface PostgresIdempotencyStoreOptions {
  /**
   * Table of the claims, optionally schema-qualified (`'billing.payments_idempotency'`). Default
   * `'payments_idempotency'`. All instances of one app must use the same table.
   */
  table?: string;
  /**
   * Create the table, its indexes and its functions on first use (`CREATE TABLE IF NOT EXISTS`,
   * `CREATE OR REPLACE FUNCTION`). Default true. Pass false when your migrations run
   * `postgresIdempotencyStoreSchema()` themselves and the app's role may not run DDL.
   */
  createTable?: boolean;
  /**
   * How long the attempt count of a key that never completes is kept, in seconds. Default
   * `DEFAULT_RETENTION_SECONDS` (3 days). A completed key is kept for its retention instead.
   */
  attemptsTtlSeconds?: number;
  /**
   * How long a watched intent's row is kept at least, in seconds (the reconciler gives up on an intent
   * after `webhooks.reconcile.maxAgeSeconds`, 7 days by default, and forgets it then). Default 8 days.
   */
  watchTtlSeconds?: number;
  /**
   * Expired rows are deleted in the background, one batch (an index range on `expires_at`, never a
   * full scan) every `cleanupEvery` claims. Default 500; 0 turns the background clean-up off (call
   * `deleteExpired()` from your own job).
   */
  cleanupEvery?: number;
  /** Rows deleted per background batch. Default 1000. */
  cleanupBatchSize?: number;
  /**
   * Send the per-delivery statements (claim, complete, release, renew) as named prepared statements
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
 * points at the same database (and table) shares the records, so a handler runs once in total.
 *
 * One row per record (an intent, or an event that names no intent); each call of the store is one
 * statement, a function of the schema (`postgresIdempotencyStoreSchema`) that locks that row, applies
 * the rules of `IdempotencyStore` and writes it back, timed by the database's clock (so instances with
 * skewed clocks agree). Concurrent claims on any number of instances get exactly one `claimed`;
 * `complete`, `release` and `renew` act only for the owner's token. The claims (and the completions) of
 * one turn of the event loop go as one statement over arrays, their rows locked in key order. Database
 * errors are never swallowed: they reject, and the receiver answers 503 without running anything.
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
  readonly #tableName: string;
  readonly #attemptsTtlMs: number;
  readonly #watchTtlMs: number;
  readonly #cleanupEvery: number;
  readonly #cleanupBatchSize: number;
  readonly #sql: PostgresIdempotencySql;
  /** Names of the per-delivery statements, unless `preparedStatements` is false (then they go as text). */
  readonly #names: Readonly<Record<PerDeliveryStatement, string>> | undefined;
  readonly #schemaSql: string | undefined;
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
    this.#tableName = table;
    this.#attemptsTtlMs =
      positiveInteger(options.attemptsTtlSeconds, DEFAULT_RETENTION_SECONDS, 'attemptsTtlSeconds') * 1000;
    this.#watchTtlMs = positiveInteger(options.watchTtlSeconds, 8 * 86_400, 'watchTtlSeconds') * 1000;
    this.#cleanupEvery = wholeNumber(options.cleanupEvery, 500, 'cleanupEvery');
    this.#cleanupBatchSize = positiveInteger(options.cleanupBatchSize, 1000, 'cleanupBatchSize');
    if (options.createTable === false) this.#schema = Promise.resolve();
    else this.#schemaSql = postgresIdempotencyStoreSchema(table);
    this.#sql = postgresIdempotencySql(table);
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
            complete: name('complete'),
            completeMany: name('completeMany'),
            release: name('release'),
            renew: name('renew'),
          };
  }

  /**
   * One per-delivery statement: named (prepared once per connection) unless `preparedStatements` is false.
   * Sent again when its connection had ended (`isConnectionEnded`: one the server ended while idle in
   * the pool), at most `endedConnectionRetries(pool)` times: nothing of it ran, and every statement here
   * is a claim or token-guarded.
   */
  private async run(part: PerDeliveryStatement, values: unknown[]): Promise<PostgresQueryResult> {
    let retries: number | undefined;
    for (;;) {
      try {
        return await this.runOnce(part, values);
      } catch (error) {
        retries ??= endedConnectionRetries(this.pool);
        if (retries-- <= 0 || !isConnectionEnded(error)) throw error;
      }
    }
  }

  private runOnce(part: PerDeliveryStatement, values: unknown[]): Promise<PostgresQueryResult> {
    const text = this.#sql[part];
    if (this.#names === undefined) return this.pool.query(text, values);
    return (this.pool as unknown as PreparedQueryable).query({ name: this.#names[part], text, values });
  }

  async claim(key: string, request: RunClaimRequest): Promise<IdempotencyClaim> {
    await this.ensureSchema();
    const leaseMs = wholeMs(request.leaseMs, 'PostgresIdempotencyStore');
    const token = randomUUID();
    const row = await this.#statements.claim({
      key,
      slot: request.slot,
      eventId: request.eventId ?? null,
      token,
      leaseMs,
      keepMs: Math.max(this.#attemptsTtlMs, leaseMs),
      exclusive: request.exclusive === true,
    });
    this.maybeCleanUp();
    return claimOf(row, token);
  }

  async complete(key: string, completion: RunCompletion): Promise<void> {
    await this.ensureSchema();
    await this.#statements.complete({
      key,
      slot: completion.slot,
      token: completion.token,
      eventId: completion.eventId ?? null,
      retentionMs: wholeMs(completion.retentionMs, 'PostgresIdempotencyStore'),
      unwatch: completion.unwatch === true,
    });
  }

  async release(key: string, release: RunRelease): Promise<void> {
    await this.ensureSchema();
    await this.run('release', [key, release.slot, release.token, this.#attemptsTtlMs]);
  }

  /** Extends the owner's lease (one statement); false when the token no longer owns the slot. */
  async renew(key: string, renewal: RunRenewal): Promise<boolean> {
    await this.ensureSchema();
    const { rows } = await this.run('renew', [
      key,
      renewal.slot,
      renewal.token,
      wholeMs(renewal.leaseMs, 'PostgresIdempotencyStore'),
    ]);
    return rows[0]?.['renewed'] === true;
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

  /**
   * The reconciler's watch list of one module instance, kept in the rows of this store's table (the
   * `watch_*` columns, null when not watched) and its `<table>_lease` table: one table for every
   * instance, the instance's name a value (`watch_scope`), so no name of an instance can reach a table name.
   */
  intentWatchStore(instance?: string): PostgresIntentWatchStore {
    return new PostgresIntentWatchStore(this.pool, {
      table: this.#tableName,
      instance,
      watchTtlMs: this.#watchTtlMs,
      ready: () => this.ensureSchema(),
    });
  }

  /** Waits for a background clean-up batch, if one runs. The pool belongs to the caller: it stays open. */
  async close(): Promise<void> {
    await this.#cleanup;
  }

  /** Creates the schema once per store (concurrent first calls share one attempt; a failure is retried on the next call). */
  private ensureSchema(): Promise<void> {
    if (this.#schema !== undefined) return this.#schema;
    const created = this.createSchema();
    this.#schema = created;
    created.catch(() => {
      if (this.#schema === created) this.#schema = undefined;
    });
    return created;
  }

  private async createSchema(): Promise<void> {
    // A table of 0.1.0 (one row per key, no `runs`): refused by name, never written in a layout it does not have.
    const { rows } = await this.pool.query(
      `SELECT count(*) FILTER (WHERE attname = 'runs')::int AS runs, count(*)::int AS columns FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`,
      [this.table],
    );
    if (Number(rows[0]?.['columns'] ?? 0) > 0 && Number(rows[0]?.['runs']) === 0) {
      throw new PaymentsError(
        `The table ${this.table} has the layout of nestjs-payments 0.1.0 (one row per claim key): migrate it as docs/custom-store.md#upgrading-from-010 shows, or give the store another table`,
      );
    }
    const ready = postgresSchemaReadySql(this.#tableName, '_watch_due_idx');
    await runPostgresSchema(this.pool, this.#schemaSql!, {
      text: `${ready.text.replace(' AS ready', '')} AND to_regproc($3) IS NOT NULL AS ready`,
      values: [...ready.values, postgresNameBeside(this.#tableName, '_claim')],
    });
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

/** A claim's answer from the function's row (`handled`: `{ "<state>|<handler>": ms }`). */
function claimOf(row: ClaimRow | undefined, token: string): IdempotencyClaim {
  const status = row?.['status'];
  if (status === 'done') return DONE;
  if (status === 'busy') return BUSY;
  if (status !== 'claimed')
    throw new PaymentsError('PostgresIdempotencyStore: unexpected answer from the claim function');
  const handled = row!['handled'] as Record<string, unknown> | null;
  return {
    status: 'claimed',
    token,
    attempt: Number(row!['attempt']),
    version: Number(row!['version']),
    handled: handled === null || handled === undefined ? NOTHING_HANDLED : handledOf(handled),
  };
}

/**
 * `handled` from the function's object: by slot; a key without `|` is a state alone, as the claim
 * function of an earlier build of this release answered (a schema created before it is not replaced).
 */
function handledOf(handled: Record<string, unknown>): readonly HandledState[] {
  const slots = new Map<string, number>();
  const states: HandledState[] = [];
  for (const key of Object.keys(handled)) {
    if (key.includes('|')) slots.set(key, Number(handled[key]));
    else states.push({ state: key, at: Number(handled[key]) });
  }
  return states.length === 0 ? handledOfSlots(slots) : [...handledOfSlots(slots), ...states];
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
