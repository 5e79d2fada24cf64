/**
 * The transaction a transactional handler runs in, as the handler sees it (`ctx.transaction`) and as
 * the inbox uses it to write the completion record.
 */
export interface PaymentsTransaction {
  /**
   * Runs one SQL statement inside the transaction (`$1`, `$2`, ... parameters) and resolves to its
   * rows. Plain-`pg` handlers write with it; ORM handlers usually keep using their repositories.
   */
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ): Promise<R[]>;
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
