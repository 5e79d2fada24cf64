import { Injectable, Logger } from '@nestjs/common';
import type { Order } from './order.model.js';

/** A shipped order: the side effect that must happen exactly once per paid order. */
export interface Shipment {
  readonly orderId: string;
  readonly at: string;
}

/**
 * Ships paid orders (here: records a shipment). Idempotent by order id, so that the handler can
 * call it again when a redelivery retries an event whose first attempt failed after the order was
 * already marked paid: the retry completes the work and never ships twice.
 */
@Injectable()
export class FulfilmentService {
  private readonly logger = new Logger(FulfilmentService.name);
  readonly #shipments = new Map<string, Shipment>();

  /** Ships `order` unless it was shipped already. Returns whether it shipped now. */
  async fulfil(order: Order): Promise<boolean> {
    if (this.#shipments.has(order.id)) return false;
    this.#shipments.set(order.id, Object.freeze({ orderId: order.id, at: new Date().toISOString() }));
    this.logger.log(`order ${order.id} shipped`);
    return true;
  }

  /** Every shipment so far, oldest first. */
  shipments(): Shipment[] {
    return [...this.#shipments.values()];
  }
}
