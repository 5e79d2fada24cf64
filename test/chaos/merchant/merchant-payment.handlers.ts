import { Injectable } from '@nestjs/common';
import {
  OnPaymentEvent,
  type PaymentEvent,
  type PaymentEventContext,
  type PaymentEventType,
  type PaymentIntent,
} from '../../../lib/index.js';
import { HandlerEffectsLedger } from './handler-effects.ledger.js';
import { MerchantOrdersRepository, type MerchantOrderStatus } from './merchant-orders.repository.js';

/** Handler ids as the registry names them (`Class.method`): the second half of each idempotency key. */
export const HANDLER_IDS = {
  status: 'OrderStatusHandler.onPaymentIntent',
  fulfilment: 'OrderFulfilmentHandler.onSucceeded',
  charge: 'ChargeReconciliationHandler.onCharge',
  ledger: 'PaymentLedgerHandler.onAnyEvent',
} as const;

/** The handlers each event type reaches in the merchant app. */
export function handlersFor(type: string): string[] {
  const ids: string[] = [HANDLER_IDS.ledger];
  if (type.startsWith('payment_intent.')) ids.push(HANDLER_IDS.status);
  if (type === 'payment_intent.succeeded') ids.push(HANDLER_IDS.fulfilment);
  if (type === 'charge.succeeded' || type === 'charge.requires_capture') ids.push(HANDLER_IDS.charge);
  return ids;
}

/** The order status an intent state implies (the states of a lifecycle only ever move up this order). */
export function orderStatusFor(intentState: string): MerchantOrderStatus {
  if (intentState === 'succeeded') return 'paid';
  if (intentState === 'cancelled' || intentState.startsWith('errored_')) return 'failed';
  return 'pending';
}

const intentOf = (event: PaymentEvent): PaymentIntent | undefined =>
  (event.data as { payment_intent?: PaymentIntent }).payment_intent;

/** Moves the order of the intent with conditional updates: pending -> failed, pending|failed -> paid. */
@Injectable()
export class OrderStatusHandler {
  constructor(
    private readonly orders: MerchantOrdersRepository,
    private readonly effects: HandlerEffectsLedger,
  ) {}

  @OnPaymentEvent('payment_intent.*')
  onPaymentIntent(event: PaymentEvent<Extract<PaymentEventType, `payment_intent.${string}`>>): void {
    this.effects.begin(event.id, HANDLER_IDS.status);
    const order = this.orders.byPaymentIntent(intentOf(event)?.id ?? '');
    if (order) {
      const target = orderStatusFor(event.event.slice('payment_intent.'.length));
      if (target === 'paid') this.orders.transition(order.id, ['pending', 'failed'], 'paid');
      if (target === 'failed') this.orders.transition(order.id, ['pending'], 'failed');
    }
    this.effects.complete(event.id, HANDLER_IDS.status);
  }
}

/** Ships a paid order, once. */
@Injectable()
export class OrderFulfilmentHandler {
  constructor(
    private readonly orders: MerchantOrdersRepository,
    private readonly effects: HandlerEffectsLedger,
  ) {}

  @OnPaymentEvent('payment_intent.succeeded')
  onSucceeded(event: PaymentEvent<'payment_intent.succeeded'>): void {
    this.effects.begin(event.id, HANDLER_IDS.fulfilment);
    const order = this.orders.byPaymentIntent(intentOf(event)?.id ?? '');
    if (order) this.orders.shipOnce(order.id);
    this.effects.complete(event.id, HANDLER_IDS.fulfilment);
  }
}

/** [W14] automatic_async: reads the capture state from the intent itself (a GET through PaymentsService). */
@Injectable()
export class ChargeReconciliationHandler {
  constructor(
    private readonly orders: MerchantOrdersRepository,
    private readonly effects: HandlerEffectsLedger,
  ) {}

  @OnPaymentEvent('charge.succeeded', 'charge.requires_capture')
  async onCharge(
    event: PaymentEvent<'charge.succeeded' | 'charge.requires_capture'>,
    ctx: PaymentEventContext,
  ): Promise<void> {
    this.effects.begin(event.id, HANDLER_IDS.charge);
    let intent: PaymentIntent;
    try {
      intent = (await ctx.retrieveIntent()) as PaymentIntent;
    } catch (error) {
      this.effects.unexpected(error);
      throw error;
    }
    const order = this.orders.byPaymentIntent(intent.id);
    if (order) this.orders.recordChargeState(order.id, intent.state);
    this.effects.complete(event.id, HANDLER_IDS.charge);
  }
}

/** Books every event in the merchant's ledger: the handler that must see every event exactly once. */
@Injectable()
export class PaymentLedgerHandler {
  constructor(private readonly effects: HandlerEffectsLedger) {}

  @OnPaymentEvent('*')
  onAnyEvent(event: PaymentEvent): void {
    this.effects.begin(event.id, HANDLER_IDS.ledger);
    this.effects.complete(event.id, HANDLER_IDS.ledger);
  }
}

export const MERCHANT_HANDLERS = [
  OrderStatusHandler,
  OrderFulfilmentHandler,
  ChargeReconciliationHandler,
  PaymentLedgerHandler,
];
