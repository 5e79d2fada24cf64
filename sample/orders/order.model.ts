/**
 * Where an order stands. Only a verified webhook moves an order out of `pending`; the browser's
 * confirm result never does (the reference calls it a UX signal only).
 *
 * - `pending`: created, waiting for the payment's outcome (also while the intent `requires_*` action).
 * - `paid`: a verified `payment_intent.succeeded` arrived. Terminal.
 * - `failed`: a verified `payment_intent.errored_*` arrived (the shopper may pay again).
 * - `cancelled`: the shopper cancelled the payment (a verified `payment_intent.cancelled`) or the
 *   merchant cancelled the order. Terminal: a late payment never revives it.
 */
export type OrderStatus = 'pending' | 'paid' | 'failed' | 'cancelled';

/** An order of the sample shop, as the repository stores it (read-only snapshots leave it). */
export interface Order {
  readonly id: string;
  /** In the smallest unit of `currency` (the reference does not state the unit of `amount`). */
  readonly amount: number;
  readonly currency: string;
  readonly status: OrderStatus;
  /** The payment intent created for this order. */
  readonly paymentIntentId: string;
  /** While `pending`: the action the payment waits for (`requires_capture`, `requires_review`...), from a verified event. */
  readonly action?: string;
  /** What verified events said without changing the status (actions required, late payments...). */
  readonly notes: readonly string[];
  /** Every status change, oldest first: the audit trail tests count side effects with. */
  readonly history: readonly OrderStatusChange[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** One status change of an order, and what caused it. */
export interface OrderStatusChange {
  readonly from: OrderStatus;
  readonly to: OrderStatus;
  /** e.g. `payment_intent.succeeded (event 3f0c...)` or `cancelled by the merchant`. */
  readonly cause: string;
  readonly at: string;
}
