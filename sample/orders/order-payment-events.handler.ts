import { Injectable, Logger } from '@nestjs/common';
import { OnPaymentEvent, type PaymentEvent, type PaymentEventContext, type PaymentIntent } from '../../lib/index.js';
import { intentFromEvent } from '../shared/intent-from-event.util.js';
import { FulfilmentService } from './fulfilment.service.js';
import type { Order } from './order.model.js';
import { OrdersRepository } from './orders.repository.js';

type FailureEvent =
  | 'payment_intent.cancelled'
  | 'payment_intent.errored_authorization'
  | 'payment_intent.errored_capture'
  | 'payment_intent.errored_sale';

type ActionRequiredEvent =
  | 'payment_intent.requires_payment_method'
  | 'payment_intent.requires_confirmation'
  | 'payment_intent.requires_capture'
  | 'payment_intent.requires_review';

type ChargeEvent = 'charge.succeeded' | 'charge.requires_capture';

/**
 * Moves orders from verified webhook events, and only from them (the browser's confirm result is a
 * UX signal). The module has verified the signature and deduplicated the event id before any
 * method here runs; each method still changes an order through a conditional `transition`, so a
 * replayed, reordered or late event changes nothing it should not:
 *
 * - `succeeded` moves `pending` or `failed` to `paid` (a processor error on one attempt does not stop
 *   a later success; if the two arrive out of order the order still ends `paid`), never `cancelled`;
 * - `cancelled` moves only `pending` to `cancelled`, `errored_*` only `pending` to `failed`, so they
 *   never undo a payment;
 * - `requires_*` leave the order `pending`, with the action it waits for and a note;
 * - `charge.*` (capture method `automatic_async`) retrieve the intent for its capture state.
 */
@Injectable()
export class OrderPaymentEventsHandler {
  private readonly logger = new Logger(OrderPaymentEventsHandler.name);

  constructor(
    private readonly orders: OrdersRepository,
    private readonly fulfilment: FulfilmentService,
  ) {}

  // Fulfilment acts on the intent's current state: a late `succeeded` of an intent that moved on is
  // answered `superseded` and never fulfils; `ctx.intent` is the intent as just retrieved (docs/current-state.md).
  @OnPaymentEvent('payment_intent.succeeded', { current: true })
  async onSucceeded(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    // [W12] data is not a frozen schema: without the amount, the intent retrieved for this run has it.
    const intent = await intentFromEvent(event.data.payment_intent, ['amount'], ctx);
    const order = this.orderOf(intent, event);
    if (order === undefined) return;

    if (intent.amount !== order.amount) {
      this.orders.addNote(
        order.id,
        `payment_intent.succeeded for amount ${String(intent.amount)} instead of ${order.amount}: review (event ${event.id})`,
      );
      this.logger.warn(`order ${order.id}: paid amount differs from the order's; left ${order.status} for review`);
      return;
    }

    const paid = this.orders.transition(order.id, ['pending', 'failed'], 'paid', causeOf(event, ctx));
    const current = paid ?? this.orders.findById(order.id);
    if (current?.status === 'paid') {
      // Also on a retry of this event after `fulfil` failed: the order is paid already, and the
      // idempotent fulfilment completes the work left undone.
      await this.fulfilment.fulfil(current);
      return;
    }
    if (current?.status === 'cancelled') {
      this.orders.addNote(order.id, `payment received after the order was cancelled: refund it (event ${event.id})`);
      this.logger.warn(`order ${order.id} is cancelled but its payment succeeded: needs a refund`);
    }
  }

  @OnPaymentEvent(
    'payment_intent.cancelled',
    'payment_intent.errored_authorization',
    'payment_intent.errored_capture',
    'payment_intent.errored_sale',
  )
  async onFailed(event: PaymentEvent<FailureEvent>, ctx: PaymentEventContext): Promise<void> {
    const intent = await intentFromEvent(event.data.payment_intent, [], ctx);
    const order = this.orderOf(intent, event);
    if (order === undefined) return;
    const to = event.event === 'payment_intent.cancelled' ? 'cancelled' : 'failed';
    const moved = this.orders.transition(order.id, ['pending'], to, `${event.event} (event ${event.id})`);
    if (moved === undefined) {
      this.orders.addNote(order.id, `${event.event} ignored: the order is ${order.status} (event ${event.id})`);
    }
  }

  @OnPaymentEvent(
    'payment_intent.requires_payment_method',
    'payment_intent.requires_confirmation',
    'payment_intent.requires_capture',
    'payment_intent.requires_review',
  )
  async onActionRequired(event: PaymentEvent<ActionRequiredEvent>, ctx: PaymentEventContext): Promise<void> {
    const intent = await intentFromEvent(event.data.payment_intent, [], ctx);
    const order = this.orderOf(intent, event);
    if (order === undefined) return;
    this.orders.setAction(order.id, event.event.slice('payment_intent.'.length));
    this.orders.addNote(
      order.id,
      `${event.event}: more action is needed before the payment completes (event ${event.id})`,
    );
  }

  @OnPaymentEvent('charge.succeeded', 'charge.requires_capture')
  async onCharge(event: PaymentEvent<ChargeEvent>, ctx: PaymentEventContext): Promise<void> {
    // [W14] with automatic_async, the intent is the source of truth for the capture state.
    const intent = (await ctx.retrieveIntent()) as PaymentIntent;
    const order = this.orderOf(intent, event);
    if (order === undefined) return;
    this.orders.addNote(order.id, `${event.event}: intent is ${intent.state} (event ${event.id})`);
  }

  private orderOf(intent: PaymentIntent, event: PaymentEvent): Order | undefined {
    const order = this.orders.findByPaymentIntent(intent.id);
    if (order === undefined) {
      // Not one of ours (another app on the same endpoint, or an order we no longer keep): 200, no retry.
      this.logger.warn(`${event.event} ${event.id}: no order for payment intent ${intent.id}`);
    }
    return order;
  }
}

/**
 * What moved an order, for its history and the operator view: the event and its id, or, when no
 * webhook came, the reconciler's retrieve of the intent (such an event has no id).
 */
export function causeOf(event: PaymentEvent, ctx: PaymentEventContext): string {
  return ctx.source === 'reconciliation'
    ? `${event.event} (reconciled: no webhook came, the intent was retrieved)`
    : `${event.event} (event ${event.id})`;
}
