import { Injectable } from '@nestjs/common';
import type { Order, OrderStatus } from './order.model.js';

/** What `OrdersRepository.insert` needs; the rest starts empty. */
export interface NewOrder {
  id: string;
  amount: number;
  currency: string;
  paymentIntentId: string;
}

/**
 * In-memory orders. Every status change goes through `transition`, a compare-and-set: it changes
 * the order only when its current status is one of `from`. That single rule is what makes the
 * webhook handlers safe against duplicates, retries, reordering and late events: a replayed
 * `payment_intent.succeeded` finds the order already `paid` and changes nothing, and a late one
 * finds it `cancelled` and cannot revive it. A real app does the same with
 * `UPDATE orders SET status = $to WHERE id = $id AND status = ANY($from)`.
 */
@Injectable()
export class OrdersRepository {
  readonly #orders = new Map<string, Order>();
  readonly #byPaymentIntent = new Map<string, string>();
  /** Stores a new `pending` order. */
  insert(input: NewOrder): Order {
    const at = new Date().toISOString();
    const order: Order = Object.freeze({
      ...input,
      status: 'pending',
      notes: Object.freeze([]),
      history: Object.freeze([]),
      createdAt: at,
      updatedAt: at,
    });
    this.#orders.set(order.id, order);
    this.#byPaymentIntent.set(order.paymentIntentId, order.id);
    return order;
  }

  /** How many orders are stored. */
  count(): number {
    return this.#orders.size;
  }

  findById(id: string): Order | undefined {
    return this.#orders.get(id);
  }

  /** The order a payment intent was created for, if it is one of ours. */
  findByPaymentIntent(paymentIntentId: string): Order | undefined {
    const id = this.#byPaymentIntent.get(paymentIntentId);
    return id === undefined ? undefined : this.#orders.get(id);
  }

  /**
   * Moves the order to `to` if, and only if, its status is one of `from`. Returns the updated order,
   * or `undefined` when nothing changed (unknown order, or a status outside `from`).
   */
  transition(id: string, from: readonly OrderStatus[], to: OrderStatus, cause: string): Order | undefined {
    const current = this.#orders.get(id);
    if (current === undefined || !from.includes(current.status)) return undefined;
    const at = new Date().toISOString();
    // Out of `pending`, the payment waits for nothing any more.
    const { action: _settled, ...rest } = current;
    const next: Order = Object.freeze({
      ...rest,
      status: to,
      history: Object.freeze([...current.history, Object.freeze({ from: current.status, to, cause, at })]),
      updatedAt: at,
    });
    this.#orders.set(id, next);
    return next;
  }

  /** Records the action a `pending` order's payment waits for; undefined when the order is not pending. */
  setAction(id: string, action: string): Order | undefined {
    const current = this.#orders.get(id);
    if (current === undefined || current.status !== 'pending') return undefined;
    const next: Order = Object.freeze({ ...current, action, updatedAt: new Date().toISOString() });
    this.#orders.set(id, next);
    return next;
  }

  /** Every order, newest first. */
  list(): Order[] {
    return [...this.#orders.values()].reverse();
  }

  /** Records something an event said that does not change the status. */
  addNote(id: string, note: string): Order | undefined {
    const current = this.#orders.get(id);
    if (current === undefined) return undefined;
    const next: Order = Object.freeze({
      ...current,
      notes: Object.freeze([...current.notes, note]),
      updatedAt: new Date().toISOString(),
    });
    this.#orders.set(id, next);
    return next;
  }
}
