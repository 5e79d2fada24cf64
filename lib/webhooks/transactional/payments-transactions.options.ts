import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import { quotePostgresTable } from '../stores/postgres-sql.util.js';
import type { PaymentsTransactionRunner } from './payments-transaction-runner.interface.js';

/** Default table of the inbox (the completion records of transactional handlers). */
export const DEFAULT_PAYMENTS_INBOX_TABLE = 'payments_inbox';

/**
 * `webhooks.transactions`: run handlers in a PostgreSQL transaction that also records their
 * completion (the transactional inbox), so their database effects happen exactly once.
 *
 * @example
 * webhooks: { verifier, transactions: { runner: clsTransactionRunner({ orm: 'typeorm' }), handlers: 'all' } }
 */
export interface PaymentsTransactionsOptions {
  /** Opens the transactions: `pgTransactionRunner(pool)`, `clsTransactionRunner({ orm })`, or your own. */
  runner: PaymentsTransactionRunner;
  /**
   * Which handlers run in a transaction: `'opted-in'` (default: those declared with
   * `@OnPaymentEvent(..., { transactional: true })`) or `'all'` (every handler, except those declared
   * with `{ transactional: false }`).
   */
  handlers?: 'opted-in' | 'all';
  /**
   * Table of the completion records, optionally schema-qualified. Default `'payments_inbox'`. It
   * must live in the database the runner's transactions write to.
   */
  table?: string;
  /**
   * Create the table on the first transactional delivery (`CREATE TABLE IF NOT EXISTS`, in its own
   * transaction). Default true; pass false when your migrations run `paymentsInboxSchema()`.
   */
  createTable?: boolean;
  /**
   * Expired completion records are deleted in their own transaction, one batch (an index range on
   * `expires_at`) every `cleanupEvery` transactional runs. Default 500; 0 turns it off.
   */
  cleanupEvery?: number;
}

/** `webhooks.transactions` after validation. */
export interface ResolvedPaymentsTransactionsOptions {
  runner: PaymentsTransactionRunner;
  handlers: 'opted-in' | 'all';
  table: string;
  createTable: boolean;
  cleanupEvery: number;
}

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
