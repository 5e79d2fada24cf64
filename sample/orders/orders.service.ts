import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { PaymentsService } from '../../lib/index.js';
import type { PageAddress } from '../checkout/checkout-framing.js';
import { CheckoutSessionFactory, type CheckoutSession } from '../checkout/checkout-session.factory.js';
import type { Order } from './order.model.js';
import { OrdersRepository } from './orders.repository.js';

/** What the shop asks for when it creates an order. */
export interface CreateOrderInput {
  amount: number;
  currency: string;
  /** `automatic_async` also makes the service send `charge.*` events (watched by the handlers). */
  captureMethod?: string;
}

/** An order with what the browser needs to pay it, and nothing more. */
export interface CreatedOrder {
  order: Order;
  checkout: CheckoutSession;
}

/**
 * Creates orders and their payment intents. The intent carries the order id in its metadata, and
 * the order keeps the intent id, which is how the webhook handlers find the order again.
 */
@Injectable()
export class OrdersService {
  private readonly logger = new Logger(OrdersService.name);

  constructor(
    private readonly payments: PaymentsService,
    private readonly orders: OrdersRepository,
    private readonly checkout: CheckoutSessionFactory,
  ) {}

  /**
   * Creates the payment intent first (with the order id the order will get), then stores the order
   * as `pending`. If the service refuses, or its answer lacks a checkout token, nothing is stored
   * and the error propagates.
   */
  async create(input: CreateOrderInput, page: PageAddress = {}): Promise<CreatedOrder> {
    const id = randomUUID();
    const framing = this.checkout.framingFor(page);
    const intent = await this.payments.paymentIntents.create({
      amount: input.amount,
      currency: input.currency,
      ...(input.captureMethod === undefined ? {} : { capture_method: input.captureMethod }),
      // The reference shows no currency field on an intent: the currency also rides in the metadata,
      // where the simulator's form reads it to show the amount with its currency.
      metadata: { order_id: id, currency: input.currency },
      ...this.checkout.intentParams(framing),
    });
    const checkout = this.checkout.forIntent(intent, framing);
    const order = this.orders.insert({
      id,
      amount: input.amount,
      currency: input.currency,
      paymentIntentId: intent.id,
    });
    this.logger.log(`order ${id} created with payment intent ${intent.id}`);
    return { order, checkout };
  }

  /**
   * Cancels a `pending` order (the shopper gave up, stock ran out...). Returns `undefined` when the
   * order is not pending any more: a paid order is refunded, not cancelled. The reference shows no
   * call that cancels an intent, so the intent is left as it is; if it succeeds later, the handler
   * sees a cancelled order, keeps it cancelled and notes that a refund is needed.
   */
  cancel(id: string): Order | undefined {
    return this.orders.transition(id, ['pending'], 'cancelled', 'cancelled by the merchant');
  }
}
