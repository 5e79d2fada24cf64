import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import type {
  PaymentsQueryResult,
  PaymentsTransaction,
  PaymentsTransactionRunner,
} from '../contracts/payments-transaction-runner.interface.js';
import { queryAnswerOf, queryResultOf, type QueryAnswer } from './payments-query.result.js';

/**
 * The part of `@nestjs-cls/transactional`'s `TransactionHost` the runner uses. Declared here, rather
 * than imported, so that apps without CLS install nothing; any `TransactionHost` satisfies it.
 */
export interface ClsTransactionHostLike {
  readonly tx: unknown;
  withTransaction<R>(propagation: string, fn: () => Promise<R>): Promise<R>;
}

/**
 * How the inbox, and `ctx.transaction.query`, run SQL on the ORM's transaction (`txHost.tx`):
 * `'typeorm'` (the transaction's `QueryRunner`, structured result: rows and affected count),
 * `'drizzle'` (`tx.execute`, node-postgres or postgres-js driver), or a function for any other adapter
 * (Kysely, Knex, MikroORM, ...), resolving to the rows, or to the driver's result with `rows` (and
 * `rowCount`, `command` when it has them: node-postgres' `QueryResult` fits), so that
 * `ctx.transaction.query` can report them.
 */
export type ClsTransactionQuery =
  | 'typeorm'
  | 'drizzle'
  | ((
      tx: unknown,
      text: string,
      params: readonly unknown[],
    ) => Promise<
      Record<string, unknown>[] | { rows: Record<string, unknown>[]; rowCount?: number | null; command?: string }
    >);

/** A runner's query, as `run` uses it: the driver's answer, read. */
type AnswerQuery = (tx: unknown, text: string, params: readonly unknown[]) => Promise<QueryAnswer>;

/** Options of `clsTransactionRunner`. */
export interface ClsTransactionRunnerOptions {
  /** Which ORM the `TransactionHost`'s adapter wraps (see `ClsTransactionQuery`). */
  orm: ClsTransactionQuery;
  /**
   * The `TransactionHost` to use. Default: the one `ClsPluginTransactional` registered
   * (`TransactionHost.getInstance(connectionName)`), found on the first delivery.
   */
  txHost?: ClsTransactionHostLike;
  /** `connectionName` of the `ClsPluginTransactional` to join, when the app registers several. */
  connectionName?: string;
}

/** Sent before COMMIT: fails (25P02) when an earlier, caught error aborted the transaction. */
const ABORTED_PROBE = 'SELECT 1';

/** `Propagation.RequiresNew`: every (event, handler) gets a transaction of its own. */
const REQUIRES_NEW = 'REQUIRES_NEW';

/**
 * `PaymentsTransactionRunner` on `@nestjs-cls/transactional`: the inbox opens the transaction with
 * the app's own `TransactionHost`, so code that already uses `@Transactional()` or `txHost.tx`
 * (TypeORM repositories, Drizzle queries, ...) joins it unchanged, and the completion record commits
 * with it. `@nestjs-cls/transactional` is loaded on the first delivery, only when this runner is used.
 *
 * @example
 * ClsModule.forRoot({ plugins: [new ClsPluginTransactional({ imports: [TypeOrmModule], adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: DataSource }) })] }),
 * PaymentsModule.forRoot({ ..., webhooks: { verifier, transactions: { runner: clsTransactionRunner({ orm: 'typeorm' }) } } })
 */
export function clsTransactionRunner(options: ClsTransactionRunnerOptions): PaymentsTransactionRunner {
  const orm = options?.orm;
  if (orm !== 'typeorm' && orm !== 'drizzle' && typeof orm !== 'function') {
    throw new PaymentsConfigurationError(
      'webhooks.transactions.runner',
      "clsTransactionRunner needs `orm`: 'typeorm', 'drizzle' or a query function",
      "pass clsTransactionRunner({ orm: 'typeorm' }) (or 'drizzle', or (tx, sql, params) => rows for another adapter)",
    );
  }
  let host: ClsTransactionHostLike | undefined = options.txHost;
  let query: AnswerQuery | undefined =
    typeof orm === 'function'
      ? async (tx, text, params) => queryAnswerOf(await orm(tx, text, params))
      : orm === 'typeorm'
        ? typeormQuery
        : undefined;
  return {
    async run<T>(work: (tx: PaymentsTransaction) => Promise<T>): Promise<T> {
      host ??= await defaultTransactionHost(options.connectionName);
      query ??= await drizzleQuery();
      const txHost = host;
      const run = query;
      return txHost.withTransaction(REQUIRES_NEW, async () => {
        const client = txHost.tx;
        const result = await work(
          Object.freeze({
            client,
            query: async <R extends Record<string, unknown>>(
              text: string,
              params: readonly unknown[] = [],
            ): Promise<PaymentsQueryResult<R>> => queryResultOf<R>(await run(client, text, params)),
          }),
        );
        // The ORMs do not read COMMIT's answer: a transaction aborted by an error the handler caught
        // would "commit" as ROLLBACK unnoticed. Any statement fails in it (25P02), rolling it back.
        await run(client, ABORTED_PROBE, []);
        return result;
      });
    },
  };
}

async function defaultTransactionHost(connectionName: string | undefined): Promise<ClsTransactionHostLike> {
  const { TransactionHost } = await import('@nestjs-cls/transactional');
  try {
    return TransactionHost.getInstance(connectionName) as unknown as ClsTransactionHostLike;
  } catch {
    throw new PaymentsConfigurationError(
      'webhooks.transactions.runner',
      `clsTransactionRunner found no TransactionHost${connectionName ? ` for connection '${connectionName}'` : ''}`,
      'register ClsModule.forRoot({ plugins: [new ClsPluginTransactional({ adapter, connectionName? })] }), or pass clsTransactionRunner({ txHost })',
    );
  }
}

/**
 * TypeORM: the transaction's `QueryRunner` (`EntityManager.queryRunner`, set inside a transaction) with
 * its structured result (`records`, `affected`): `EntityManager.query` answers `[rows, rowCount]` for
 * an UPDATE or DELETE and the rows otherwise, so neither its rows nor its count could be told apart.
 * TypeORM keeps no command tag. A manager without a query runner falls back to `EntityManager.query`.
 */
async function typeormQuery(tx: unknown, text: string, params: readonly unknown[]): Promise<QueryAnswer> {
  const manager = tx as {
    queryRunner?: { query(text: string, params: unknown[], structured: true): Promise<unknown> };
    query(text: string, params: unknown[]): Promise<unknown>;
  };
  if (typeof manager.queryRunner?.query === 'function') {
    const result = (await manager.queryRunner.query(text, [...params], true)) as {
      records?: unknown;
      affected?: unknown;
    };
    return {
      rows: Array.isArray(result?.records) ? (result.records as Record<string, unknown>[]) : [],
      rowCount: typeof result?.affected === 'number' ? result.affected : null,
    };
  }
  const rows = await manager.query(text, [...params]);
  return { rows: Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [], rowCount: null };
}

/** Drizzle: `tx.execute(sql)`, the statement rebuilt with drizzle's `sql` tag so parameters stay parameters. */
async function drizzleQuery(): Promise<AnswerQuery> {
  const { sql } = await import('drizzle-orm');
  return async (tx, text, params) => {
    const pieces = text.split(/\$(\d+)/);
    let statement = sql.raw(pieces[0]!);
    for (let i = 1; i < pieces.length; i += 2) {
      statement = sql`${statement}${params[Number(pieces[i]) - 1]}${sql.raw(pieces[i + 1]!)}`;
    }
    // node-postgres returns a QueryResult; postgres-js an array of rows with `count` and `command`.
    return queryAnswerOf(await (tx as { execute(query: unknown): Promise<unknown> }).execute(statement));
  };
}
