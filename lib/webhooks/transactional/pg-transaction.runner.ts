import { PaymentsConfigurationError, PaymentsError } from '../../errors/payments.errors.js';
import {
  preparedStatementName,
  type PostgresPool,
  type PostgresPoolClient,
  type PreparedQueryable,
} from '../../postgres/postgres-sql.util.js';
import { watchPostgresPoolErrors } from '../../postgres/postgres-pool-errors.js';
import { queryAfterBegin } from '../../postgres/postgres-begin.pipeline.js';
import { RUN_AFTER_FIRST_STATEMENT, type FirstStatementRunner } from './pg-first-statement.js';
import { ROLLBACK_FAILED_MESSAGE } from '../contracts/payments-webhooks.messages.js';
import type {
  PaymentsQueryResult,
  PaymentsTransaction,
  PaymentsTransactionRunner,
} from '../contracts/payments-transaction-runner.interface.js';
import { queryResultOf } from './payments-query.result.js';

/** A COMMIT answered ROLLBACK (an earlier, caught error aborted the transaction); the connection is fine. */
class CommitRolledBack extends PaymentsError {
  constructor() {
    super('COMMIT was answered ROLLBACK: an error caught inside the transaction had aborted it, nothing was committed');
  }
}

/** Options of `pgTransactionRunner`. */
export interface PgTransactionRunnerOptions {
  /**
   * Statement opening each transaction. Default `'BEGIN'`; e.g. `'BEGIN ISOLATION LEVEL SERIALIZABLE'`
   * (a serialization failure then rolls back and is answered 503, so the service retries).
   */
  begin?: string;
}

/**
 * `PaymentsTransactionRunner` on a node-postgres pool, without CLS: each transactional handler gets a
 * client of its own, `BEGIN` ... `COMMIT` (or `ROLLBACK`), and reaches it as `ctx.transaction`
 * (`ctx.transaction.query(sql, params)`: the rows, with pg's `rowCount` and `command` beside them; or
 * `ctx.transaction.client` for the `PoolClient`). A client
 * whose rollback fails (the connection broke) is destroyed, not returned to the pool.
 *
 * @example
 * webhooks: { verifier, transactions: { runner: pgTransactionRunner(pool) } }
 * \@OnPaymentEvent('payment_intent.succeeded', { transactional: true })
 * async paid(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext) {
 *   await ctx.transaction!.query('UPDATE orders SET paid = true WHERE intent_id = $1', [event.data.payment_intent?.id]);
 * }
 */
export function pgTransactionRunner(
  pool: PostgresPool,
  options: PgTransactionRunnerOptions = {},
): PaymentsTransactionRunner {
  if (
    pool === null ||
    typeof pool !== 'object' ||
    typeof pool.connect !== 'function' ||
    typeof pool.query !== 'function'
  ) {
    throw new PaymentsConfigurationError(
      'webhooks.transactions.runner',
      'pgTransactionRunner needs a node-postgres Pool',
      'pass pgTransactionRunner(new Pool({ connectionString }))',
    );
  }
  watchPostgresPoolErrors(pool);
  const begin = options.begin ?? 'BEGIN';
  if (!/^BEGIN\b/i.test(begin) || begin.includes(';')) {
    throw new PaymentsConfigurationError(
      'pgTransactionRunner begin',
      'must be one BEGIN statement',
      "pass e.g. 'BEGIN ISOLATION LEVEL REPEATABLE READ', or omit it",
    );
  }
  /**
   * One transaction on a client of its own. With `first` (the inbox's claim), `begin` and that statement
   * go in one exchange when the client allows it (`queryAfterBegin`), and `work` gets its rows; the
   * semantics are those of `begin`, then the statement, then `work`.
   */
  async function inTransaction<T>(
    first: { text: string; values: unknown[] } | undefined,
    work: (tx: PaymentsTransaction, firstRows: Record<string, unknown>[] | undefined) => Promise<T>,
  ): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    // The server may end the connection between statements (restart, pg_terminate_backend): node-postgres
    // then emits 'error' on the checked-out client, which would crash the process without a listener.
    const onError = (error: Error): void => {
      broken = error;
    };
    client.on?.('error', onError);
    // BEGIN, ROLLBACK or COMMIT failed: the connection is in an unknown state, do not reuse it. Not only a
    // socket error: a backend the server ends (pg_terminate_backend, shutdown) answers the statement in
    // flight with FATAL 57P01 (a SQLSTATE) *before* its socket closes, and a client released then sat in
    // the pool, still "queryable", until the next delivery got it and failed (503).
    const control = async (text: string): Promise<{ command?: string }> => {
      try {
        return await client.query(text);
      } catch (error) {
        broken ??= error instanceof Error ? error : new PaymentsError(ROLLBACK_FAILED_MESSAGE);
        throw error;
      }
    };
    try {
      const tx = pgTransaction(client);
      const name = first === undefined ? undefined : OWN_PREPARED_STATEMENTS.get(first.text);
      const together =
        first === undefined || name === undefined
          ? undefined
          : queryAfterBegin(client, begin, { name, text: first.text, values: [...first.values] });
      let result: T;
      if (together === undefined) await control(begin);
      try {
        const firstRows =
          together !== undefined
            ? ((await together).rows as Record<string, unknown>[])
            : first === undefined
              ? undefined
              : await tx.query(first.text, first.values);
        result = await work(tx, firstRows);
      } catch (error) {
        // The handler's error is the answer; a failed ROLLBACK only marks the connection broken. (After
        // `begin` and the first statement sent together, a failure of either is rolled back alike: a
        // ROLLBACK with no transaction open is only a warning.)
        await control('ROLLBACK').catch(() => undefined);
        throw error;
      }
      // An error the handler caught has aborted the transaction: PostgreSQL answers COMMIT with
      // ROLLBACK (no error). Nothing was committed: fail, so the inbox releases the claim (503). The
      // connection itself is fine.
      if ((await control('COMMIT')).command === 'ROLLBACK') throw new CommitRolledBack();
      return result;
    } finally {
      client.off?.('error', onError);
      client.release(broken ?? undefined);
    }
  }
  const runner: PaymentsTransactionRunner & FirstStatementRunner = {
    run<T>(work: (tx: PaymentsTransaction) => Promise<T>): Promise<T> {
      return inTransaction(undefined, (tx) => work(tx));
    },
    [RUN_AFTER_FIRST_STATEMENT]: inTransaction,
  };
  return runner;
}

/**
 * This package's own statements that a pg transaction sends as named prepared statements (parsed and
 * planned once per connection), by text: the inbox's claim. Statements of the app go as they are.
 */
const OWN_PREPARED_STATEMENTS = new Map<string, string>();

/** Marks `text` (one of the package's own statements) to be sent prepared by `pgTransaction`. */
export function preparePgStatement(prefix: string, text: string): void {
  OWN_PREPARED_STATEMENTS.set(text, preparedStatementName(prefix, text));
}

/** A `PaymentsTransaction` over a checked-out client. */
export function pgTransaction(client: PostgresPoolClient): PaymentsTransaction {
  return Object.freeze({
    client,
    async query<R extends Record<string, unknown>>(
      text: string,
      params?: readonly unknown[],
    ): Promise<PaymentsQueryResult<R>> {
      const values = params === undefined ? undefined : [...params];
      const name = OWN_PREPARED_STATEMENTS.get(text);
      const result = await (name === undefined
        ? client.query(text, values)
        : (client as unknown as PreparedQueryable).query({ name, text, values: values ?? [] }));
      return queryResultOf<R>(result);
    },
  });
}
