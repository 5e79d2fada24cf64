import { Injectable, Optional } from '@nestjs/common';
import { PaymentDeliveryJournal, PaymentEventsQueue, type FailedPaymentEvent } from '../../lib/index.js';
import {
  type PaymentDeliveryJournalEntry,
  type PaymentDeliveryJournalTotals,
  type PaymentRejectionRecord,
} from '../../lib/webhooks/index.js';
import type { Order } from '../orders/order.model.js';
import { OrdersRepository } from '../orders/orders.repository.js';

/** An order as the operator sees it. */
export type AdminOrderView = Pick<
  Order,
  'id' | 'amount' | 'currency' | 'status' | 'action' | 'createdAt' | 'updatedAt'
> & {
  /** Settled by the reconciler (`webhooks.reconcile`): its webhook never came. */
  reconciled: boolean;
};

/** Everything `/admin` shows, from the module's public API (journal, queue) and the shop's orders. */
export interface AdminOverview {
  processing: 'inline' | 'queue';
  totals: PaymentDeliveryJournalTotals;
  deliveries: PaymentDeliveryJournalEntry[];
  /** Deliveries refused before their event was trusted (bad signature, oversized...), newest first. */
  rejections: PaymentRejectionRecord[];
  /** Queue mode: events whose handlers failed on every attempt (replayable). */
  failed: FailedPaymentEvent[];
  failedCount: number;
  orders: AdminOrderView[];
}

const ORDERS_SHOWN = 20;
const DELIVERIES_SHOWN = 50;

/** Builds the operator's overview; replays and cancels on the operator's behalf. */
@Injectable()
export class AdminOverviewService {
  constructor(
    private readonly journal: PaymentDeliveryJournal,
    private readonly orders: OrdersRepository,
    // Registered by the module only when queued processing may be on.
    @Optional() private readonly queue?: PaymentEventsQueue,
  ) {}

  async overview(): Promise<AdminOverview> {
    const queue = this.queue?.enabled ? this.queue : undefined;
    const queued = queue !== undefined;
    const [failed, failedCount] = queue ? await Promise.all([queue.failed(0, 49), queue.failedCount()]) : [[], 0];
    return {
      processing: queued ? 'queue' : 'inline',
      totals: this.journal.totals(),
      deliveries: this.journal.entries(DELIVERIES_SHOWN),
      rejections: this.journal.rejections().slice(0, 10),
      failed,
      failedCount,
      orders: this.orders
        .list()
        .slice(0, ORDERS_SHOWN)
        .map((o) => ({
          id: o.id,
          amount: o.amount,
          currency: o.currency,
          status: o.status,
          ...(o.action === undefined ? {} : { action: o.action }),
          // Settled by the reconciler (its webhook never came): the operator sees which orders.
          reconciled: o.history.some((change) => change.cause.includes('(reconciled:')),
          createdAt: o.createdAt,
          updatedAt: o.updatedAt,
        })),
    };
  }

  /** Moves a failed event back to the queue (queue mode only). */
  async replay(eventId: string): Promise<boolean> {
    if (!this.queue?.enabled) return false;
    return this.queue.replay(eventId.toLowerCase());
  }
}
