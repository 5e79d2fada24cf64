import type { PaymentEvent, PaymentEventContext, PaymentEventPattern } from './payment-event.types.js';

/**
 * Per-handler options of `@OnPaymentEvent`, given as its last argument. Options of several
 * `@OnPaymentEvent`s on one method are merged (the decorator closest to the method, which applies first, wins on a clash).
 */
export interface OnPaymentEventOptions {
  /**
   * Run this handler in a PostgreSQL transaction that also records its completion (the inbox): its
   * database writes and the "done" record commit together or not at all. Needs
   * `webhooks.transactions` in the module options (a `PaymentsTransactionRunner`). Default: whatever
   * `webhooks.transactions.handlers` says (`'opted-in'`: false; `'all'`: true). `false` opts a handler
   * out when the module makes every handler transactional.
   */
  transactional?: boolean;
  /**
   * Current-state handling: before this handler runs for an intent's state event
   * (`payment_intent.<state>`, `setup_intent.<state>`), the intent is retrieved (one GET shared by
   * every handler and concurrent delivery of that intent), and the handler runs only while that is
   * still the intent's state, with the retrieved intent as `ctx.intent`. A delivery whose state the
   * intent has left is answered `superseded` (200) and the current state is dispatched instead, as
   * reconciliation does. Runs of one intent's states never overlap (another state answers 409).
   * Default: `webhooks.currentState` (false). `false` opts a handler out when the receiver opts all in.
   * Events that name no intent run as without it. See docs/current-state.md.
   *
   * @example \@OnPaymentEvent('payment_intent.succeeded', { current: true })
   */
  current?: boolean;
  /**
   * The module instance whose deliveries this handler receives (`PaymentsModule.forRoot({ name })`).
   * Default: the unnamed instance only. It applies to the whole method: every `@OnPaymentEvent` on
   * one method must name the same instance (declare one method per instance otherwise).
   */
  instance?: string;
  /**
   * The handler id, part of the idempotency key (`${event.id}:${handlerId}`). Default
   * `ClassName.methodName`. Give one when two distinct classes share a name (say `PaymentListener` in
   * two feature modules): the boot refuses them otherwise. Keep it once deliveries were handled:
   * changing it makes redeliveries run the handler again. 1-128 letters, digits, `.`, `_`, `-`.
   */
  handlerId?: string;
}

/** One `@OnPaymentEvent` method, as discovered at boot. */
export interface PaymentEventHandlerRegistration {
  /**
   * `ClassName.methodName`: stable across instances and restarts, because it is part of the
   * idempotency key (`${event.id}:${handlerId}`). Renaming a handler makes redeliveries run it again.
   */
  readonly id: string;
  /** The patterns the method was decorated with. */
  readonly patterns: readonly PaymentEventPattern[];
  /** The options given to `@OnPaymentEvent` (merged over its decorators). */
  readonly options?: Readonly<OnPaymentEventOptions>;
  /** Calls the method on its instance. */
  readonly invoke: (event: PaymentEvent, ctx: PaymentEventContext) => unknown;
}

/** The handlers of one instance, as the transactional inbox reads them (the `PaymentEventsRegistry`). */
export interface PaymentEventHandlers {
  handlers(): readonly PaymentEventHandlerRegistration[];
}
