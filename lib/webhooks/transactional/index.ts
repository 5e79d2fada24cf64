export * from '../contracts/payments-transaction-runner.interface.js';
export * from './pg-transaction.runner.js';
export * from './cls-transaction.runner.js';
export {
  DEFAULT_PAYMENTS_INBOX_TABLE,
  type PaymentsTransactionsOptions,
  type ResolvedPaymentsTransactionsOptions,
} from './payments-transactions.options.js';
export { PaymentsInbox, paymentsInboxSchema } from './payments-inbox.js';
