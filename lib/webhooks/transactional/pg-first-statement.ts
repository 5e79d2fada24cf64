import type { PaymentsTransaction } from '../contracts/payments-transaction-runner.interface.js';

/**
 * What `pgTransactionRunner` offers the inbox beside `run` (internal, not exported from the package):
 * run `work` after `first` (the inbox's claim), so that `BEGIN` and that statement can travel in one
 * exchange (3 round trips per delivery instead of 4). Other runners do not have it; the inbox then
 * sends the claim itself, through `run`.
 */
export const RUN_AFTER_FIRST_STATEMENT = Symbol('nestjs-payments.runAfterFirstStatement');

export interface FirstStatementRunner {
  [RUN_AFTER_FIRST_STATEMENT]<T>(
    first: { text: string; values: unknown[] },
    work: (tx: PaymentsTransaction, firstRows: Record<string, unknown>[] | undefined) => Promise<T>,
  ): Promise<T>;
}

/** Whether `runner` is one that can send its first statement with `BEGIN`. */
export function runsAfterFirstStatement(runner: object): runner is FirstStatementRunner {
  return typeof (runner as Partial<FirstStatementRunner>)[RUN_AFTER_FIRST_STATEMENT] === 'function';
}
