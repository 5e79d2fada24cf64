import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';

/** pending -> failed (a failure event) -> paid (a success, also after a failed attempt). Never backwards. */
export type MerchantOrderStatus = 'pending' | 'failed' | 'paid';

export interface MerchantOrder {
  id: string;
  paymentIntentId: string;
  amount: number;
  status: MerchantOrderStatus;
  /** Parcels sent: a paid order ships exactly once, whatever the deliveries do. */
  shipments: number;
  /** Status changes that happened (a replayed or late event changes nothing). */
  transitions: number;
  /** Capture state seen by the charge handler (read from the intent, the source of truth). */
  lastChargeState: string | undefined;
}

/**
 * The merchant's order store, in memory. Every write is a conditional update (compare-and-set on the
 * status, a flag for shipping), as a merchant would write it against a database, so that a late,
 * reordered or repeated event cannot undo or repeat a side effect.
 */
@Injectable()
export class MerchantOrdersRepository {
  readonly #orders = new Map<string, MerchantOrder>();
  readonly #byIntent = new Map<string, string>();
  /** Shipments attempted on an order that had already shipped (idempotent no-ops). */
  repeatedShipments = 0;

  create(paymentIntentId: string, amount: number): MerchantOrder {
    const order: MerchantOrder = {
      id: randomUUID(),
      paymentIntentId,
      amount,
      status: 'pending',
      shipments: 0,
      transitions: 0,
      lastChargeState: undefined,
    };
    this.#orders.set(order.id, order);
    this.#byIntent.set(paymentIntentId, order.id);
    return order;
  }

  byPaymentIntent(paymentIntentId: string): MerchantOrder | undefined {
    const id = this.#byIntent.get(paymentIntentId);
    return id === undefined ? undefined : this.#orders.get(id);
  }

  all(): MerchantOrder[] {
    return [...this.#orders.values()];
  }

  /** Moves the order to `to` only from one of `from`. Returns whether it moved. */
  transition(orderId: string, from: readonly MerchantOrderStatus[], to: MerchantOrderStatus): boolean {
    const order = this.#orders.get(orderId);
    if (!order || !from.includes(order.status)) return false;
    order.status = to;
    order.transitions += 1;
    return true;
  }

  /** Ships the order unless it already shipped. Returns whether it shipped now. */
  shipOnce(orderId: string): boolean {
    const order = this.#orders.get(orderId);
    if (!order) return false;
    if (order.shipments > 0) {
      this.repeatedShipments += 1;
      return false;
    }
    order.shipments = 1;
    return true;
  }

  recordChargeState(orderId: string, state: string): void {
    const order = this.#orders.get(orderId);
    if (order) order.lastChargeState = state;
  }
}
