import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import type {
  PaymentsTransaction,
  PaymentsTransactionRunner,
} from '../contracts/payments-transaction-runner.interface.js';

/**
 * The part of `@nestjs-cls/transactional`'s `TransactionHost` the runner uses. Declared here, rather
 * than imported, so that apps without CLS install nothing; any `TransactionHost` satisfies it.
 */
export interface ClsTransactionHostLike {
  readonly tx: unknown;
  withTransaction<R>(propagation: string, fn: () => Promise<R>): Promise<R>;
}

/**
 * How the inbox runs its own SQL on the ORM's transaction (`txHost.tx`): `'typeorm'`
 * (`EntityManager.query`), `'drizzle'` (`tx.execute`, node-postgres or postgres-js driver), or a
 * function for any other adapter (Kysely, Knex, MikroORM, ...), resolving to the rows.
 */
export type ClsTransactionQuery =
  | 'typeorm'
  | 'drizzle'
  | ((tx: unknown, text: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>);

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
  let query:
    ((tx: unknown, text: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>) | undefined =
    typeof orm === 'function' ? orm : orm === 'typeorm' ? typeormQuery : undefined;
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
            query: <R extends Record<string, unknown>>(text: string, params: readonly unknown[] = []) =>
              run(client, text, params) as Promise<R[]>,
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

/** TypeORM: `EntityManager.query` resolves to the rows of a SELECT / RETURNING statement. */
async function typeormQuery(tx: unknown, text: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> {
  const rows = await (tx as { query(text: string, params: unknown[]): Promise<unknown> }).query(text, [...params]);
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}

/** Drizzle: `tx.execute(sql)`, the statement rebuilt with drizzle's `sql` tag so parameters stay parameters. */
async function drizzleQuery(): Promise<
  (tx: unknown, text: string, params: readonly unknown[]) => Promise<Record<string, unknown>[]>
> {
  const { sql } = await import('drizzle-orm');
  return async (tx, text, params) => {
    const pieces = text.split(/\$(\d+)/);
    let statement = sql.raw(pieces[0]!);
    for (let i = 1; i < pieces.length; i += 2) {
      statement = sql`${statement}${params[Number(pieces[i]) - 1]}${sql.raw(pieces[i + 1]!)}`;
    }
    const result = await (tx as { execute(query: unknown): Promise<unknown> }).execute(statement);
    // node-postgres returns a QueryResult; postgres-js an array of rows.
    if (Array.isArray(result)) return result as Record<string, unknown>[];
    return ((result as { rows?: unknown }).rows as Record<string, unknown>[] | undefined) ?? [];
  };
}
