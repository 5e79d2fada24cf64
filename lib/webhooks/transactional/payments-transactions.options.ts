import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import { quotePostgresTable } from '../../postgres/postgres-sql.util.js';
import type { PaymentsTransactionRunner } from '../contracts/payments-transaction-runner.interface.js';
import type { ResolvedPaymentsTransactionsOptions } from '../contracts/payments-transactions.options.js';

/** Default table of the inbox (the completion records of transactional handlers). */
export const DEFAULT_PAYMENTS_INBOX_TABLE = 'payments_inbox';

export type {
  PaymentsTransactionsOptions,
  ResolvedPaymentsTransactionsOptions,
} from '../contracts/payments-transactions.options.js';

/** Validates `webhooks.transactions` (called by the options validator); undefined when not set. */
export function resolveTransactionsOptions(raw: unknown): ResolvedPaymentsTransactionsOptions | undefined {
  if (raw === undefined) return undefined;
  if (raw === null || typeof raw !== 'object') {
    throw new PaymentsConfigurationError(
      'webhooks.transactions',
      'must be an object',
      'pass { runner: pgTransactionRunner(pool) } or { runner: clsTransactionRunner({ orm }) }, or omit it',
    );
  }
  const options = raw as Record<string, unknown>;
  const runner = options['runner'] as { run?: unknown } | undefined;
  if (runner === null || typeof runner !== 'object' || typeof runner.run !== 'function') {
    throw new PaymentsConfigurationError(
      'webhooks.transactions.runner',
      'is required and must implement PaymentsTransactionRunner (run)',
      "pass pgTransactionRunner(pool) (plain pg) or clsTransactionRunner({ orm: 'typeorm' | 'drizzle' }) (@nestjs-cls/transactional)",
    );
  }
  const handlers = options['handlers'] ?? 'opted-in';
  if (handlers !== 'opted-in' && handlers !== 'all') {
    throw new PaymentsConfigurationError(
      'webhooks.transactions.handlers',
      "must be 'opted-in' or 'all'",
      "pass 'all' to run every handler in a transaction, or omit it",
    );
  }
  const table = options['table'] ?? DEFAULT_PAYMENTS_INBOX_TABLE;
  quotePostgresTable(table as string, 'webhooks.transactions.table');
  const createTable = options['createTable'] ?? true;
  if (typeof createTable !== 'boolean') {
    throw new PaymentsConfigurationError(
      'webhooks.transactions.createTable',
      'must be a boolean',
      'pass false when your migrations create the table, or omit it',
    );
  }
  const cleanupEvery = options['cleanupEvery'] ?? 500;
  if (!Number.isInteger(cleanupEvery) || (cleanupEvery as number) < 0) {
    throw new PaymentsConfigurationError(
      'webhooks.transactions.cleanupEvery',
      'must be a whole number >= 0',
      'pass a whole number (0 turns the clean-up off), or omit it for 500',
    );
  }
  return Object.freeze({
    runner: runner as PaymentsTransactionRunner,
    handlers,
    table: table as string,
    createTable,
    cleanupEvery: cleanupEvery as number,
  });
}
