/**
 * What `PaymentsTransaction.query` resolves to: the rows, as an array (as it always did), which also
 * carries, as non-enumerable properties (so that an equality check on the rows or a JSON dump sees
 * the rows only), what node-postgres' `QueryResult` tells:
 * - `rows`: the same rows;
 * - `rowCount`: the rows the statement affected or returned (`UPDATE ... WHERE status IN (...)`
 *   answers `0` when the compare-and-set changed nothing); `null` when the driver says none;
 * - `command`: the statement's command tag (`'UPDATE'`, `'INSERT'`, ...), where the driver reports it.
 *
 * The built-in runners set `rows` and `rowCount` (pg, TypeORM, Drizzle on node-postgres or
 * postgres-js) and `command` (all but TypeORM, whose `QueryResult` does not carry it); a
 * `PaymentsTransaction` written by hand may return a plain array, so each is typed optional.
 *
 * @example
 * const { rowCount } = await ctx.transaction!.query("UPDATE orders SET status = 'paid' WHERE intent_id = $1 AND status IN ('pending', 'authorised')", [id]);
 * if (rowCount === 0) return; // a later state got there first: change nothing
 */
export type PaymentsQueryResult<R extends Record<string, unknown> = Record<string, unknown>> = R[] & {
  readonly rows?: R[];
  readonly rowCount?: number | null;
  readonly command?: string;
};

/**
 * The transaction a transactional handler runs in, as the handler sees it (`ctx.transaction`) and as
 * the inbox uses it to write the completion record.
 */
export interface PaymentsTransaction {
  /**
   * Runs one SQL statement inside the transaction (`$1`, `$2`, ... parameters) and resolves to its
   * rows, with `rowCount` and `command` beside them (see `PaymentsQueryResult`). Plain-`pg` handlers
   * write with it; ORM handlers usually keep using their repositories.
   */
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ): Promise<PaymentsQueryResult<R>>;
  /**
   * The transaction's own handle: the checked-out `pg` `PoolClient` with `pgTransactionRunner`, the
   * ORM's transaction (`txHost.tx`: a TypeORM `EntityManager`, a Drizzle transaction, ...) with
   * `clsTransactionRunner`.
   */
  readonly client: unknown;
}

/**
 * Opens PostgreSQL transactions for transactional handlers (`webhooks.transactions.runner`). The
 * built-ins are `pgTransactionRunner(pool)` (plain node-postgres) and `clsTransactionRunner({ orm })`
 * (`@nestjs-cls/transactional`: the app's `@Transactional()` / `txHost.tx` code joins the
 * transaction). Implement it for another driver: `run` must open a new transaction, call `work`
 * inside it, commit when `work` resolves and roll back when it rejects (rejecting with that error).
 *
 * @example
 * const runner: PaymentsTransactionRunner = { run: (work) => db.transaction((tx) => work({ client: tx, query: ... })) };
 */
export interface PaymentsTransactionRunner {
  run<T>(work: (tx: PaymentsTransaction) => Promise<T>): Promise<T>;
}
