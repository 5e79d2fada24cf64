import type { PaymentsTransactionRunner } from './payments-transaction-runner.interface.js';

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
