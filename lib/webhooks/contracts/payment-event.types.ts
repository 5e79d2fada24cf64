import { PAYMENT_INTENT_STATES, SETUP_INTENT_STATES } from '../../client/payments-intent.states.js';
import type { PaymentIntent, PaymentIntentState, SetupIntent, SetupIntentState } from '../../client/payments.types.js';
import type { PaymentsTransaction } from './payments-transaction-runner.interface.js';

/** `data` of a payment-intent event: usually the intent under `payment_intent`; not a frozen schema. */
export interface PaymentIntentEventData {
  payment_intent?: PaymentIntent;
  [field: string]: unknown;
}

/** `data` of a setup-intent event. */
export interface SetupIntentEventData {
  setup_intent?: SetupIntent;
  [field: string]: unknown;
}

/** `data` of a charge event (content not shown by the reference). */
export interface ChargeEventData {
  payment_intent?: PaymentIntent;
  [field: string]: unknown;
}

/** The payment-intent states the service also signals as `charge.*` events. */
export const CHARGE_EVENT_STATES = Object.freeze([
  'succeeded',
  'requires_capture',
] as const satisfies readonly PaymentIntentState[]);

/** A payment-intent state a charge event signals. */
export type ChargeEventState = (typeof CHARGE_EVENT_STATES)[number];

/**
 * The documented event names, derived from the intent states: `payment_intent.<state>` for the nine
 * payment-intent states, `setup_intent.<state>` for the four setup-intent states, and
 * `charge.succeeded`, `charge.requires_capture`.
 */
export type DocumentedPaymentEventTypeMap = {
  [S in PaymentIntentState as `payment_intent.${S}`]: PaymentIntentEventData;
} & {
  [S in SetupIntentState as `setup_intent.${S}`]: SetupIntentEventData;
} & { [S in ChargeEventState as `charge.${S}`]: ChargeEventData };

/**
 * Every documented event name, mapped to the shape of its `data`. Extend it by declaration merging
 * when the service documents more names:
 *
 * @example
 * declare module 'nestjs-payments' {
 *   interface PaymentEventTypeMap { 'payment_intent.processing': PaymentIntentEventData }
 * }
 */
export interface PaymentEventTypeMap extends DocumentedPaymentEventTypeMap {}

/** A documented event name. A misspelt or invented name does not compile. */
export type PaymentEventType = Extract<keyof PaymentEventTypeMap, string>;

/** Wildcards accepted by `@OnPaymentEvent`. */
export type PaymentEventWildcard = 'payment_intent.*' | 'setup_intent.*' | 'charge.*' | '*';

/** What `@OnPaymentEvent` accepts: an event name or a wildcard. */
export type PaymentEventPattern = PaymentEventType | PaymentEventWildcard;

/** Event names a pattern stands for (`'payment_intent.*'` -> every `payment_intent.` name). */
export type PaymentEventTypesOf<P extends PaymentEventPattern> = P extends '*'
  ? PaymentEventType
  : P extends `${infer Prefix}.*`
    ? Extract<PaymentEventType, `${Prefix}.${string}`>
    : Extract<P, PaymentEventType>;

/**
 * A verified webhook delivery (WebhookEventPayload). `data` is typed by the event name, but it is not
 * a frozen schema: when a field is missing, use `ctx.retrieveIntent()`.
 */
export type PaymentEvent<T extends PaymentEventType = PaymentEventType> = {
  [K in T]: {
    /** Event id (UUID), identical across retries of the same event. */
    id: string;
    /** Id (UUID) of the webhook endpoint the delivery was sent to. */
    webhook_id: string;
    event: K;
    data: PaymentEventTypeMap[K];
    metadata: Record<string, unknown> | null;
  };
}[T];

/**
 * The runtime side of the name `PaymentEvent`: an empty frozen object, nothing to call. It exists so that
 * `import { PaymentEvent } from 'nestjs-payments'` compiles in a decorated handler's signature with
 * `isolatedModules` and `emitDecoratorMetadata` on (as `nest new` writes tsconfig.json): TypeScript
 * refuses a name there that is only a type (TS1272), because a one-file transpiler could not tell whether
 * to emit it in `design:paramtypes`; a name that is also a value is accepted, and emitted as `Object`.
 */
export const PaymentEvent: Readonly<Record<never, never>> = Object.freeze({});

/**
 * A state of the event's intent that a handler of this receiver already handled (its run completed),
 * as the intent's record tells it when this run was claimed: an element of `ctx.handled`.
 */
export interface HandledPaymentState {
  /** The intent's state (`succeeded`, `requires_capture`, `errored_capture`, ...), as in the event name. */
  readonly state: string;
  /**
   * The id of the handler that handled it (`handlerId` of `@OnPaymentEvent`, by default
   * `<Class>.<method>`). Set by the built-in stores; a custom store whose claim reports states only
   * leaves it undefined.
   */
  readonly handler?: string;
  /** When that handler's run of this state last completed (the store's clock). */
  readonly at: Date;
}

/** Second argument of every handler. */
export interface PaymentEventContext {
  /**
   * GETs the intent the event names (`/payment_intents/{id}` or `/setup_intents/{id}`): the source of
   * truth when `data` lacks a field, or when the capture state of an `automatic_async` intent is needed.
   */
  retrieveIntent(): Promise<PaymentIntent | SetupIntent>;
  /** 1 for the first time this handler is tried for this event, then 2, 3, ... */
  deliveryAttempt: number;
  /** When the delivery carrying this event was received (or when the reconciler retrieved the intent). */
  receivedAt: Date;
  /**
   * `'webhook'`: a verified delivery (or its queued job). `'reconciliation'`: no webhook came, and the
   * reconciler retrieved the intent in this terminal state (`webhooks.reconcile`); the event's `data`
   * holds the retrieved intent; the service gave it no id, so its `id` is a stable name-based UUID
   * (version 5) of `<kind>:<intent id>:<state>`, the same for every sweep that finds that state and
   * never a service id, and its `webhook_id` is `''` (no endpoint delivered it). Set by the receiver on
   * every context it builds.
   */
  source?: 'webhook' | 'reconciliation';
  /**
   * What the receiver already knows of the intent, without a retrieve: the states of the event's
   * intent that a handler already handled, one entry per (state, handler) with when it last completed,
   * sorted by state then handler, read from the intent's record when this run was claimed (no extra
   * store round trip). Runs in progress (this one, and handlers of the same event running beside it)
   * are not in it.
   *
   * Empty for an event that names no intent (it has a record of its own), and for an intent this
   * receiver (this module instance) has not handled yet. `undefined` only with a custom
   * `IdempotencyStore` whose `claim` does not report `handled`.
   *
   * The library invents no order of states (the reference documents none): guard yourself, e.g. a
   * late `requires_capture` after `succeeded` (docs/webhooks.md#events-out-of-order):
   *
   * @example if (ctx.handled?.some((h) => h.state === 'succeeded')) return;
   */
  handled?: readonly HandledPaymentState[];
  /**
   * The PostgreSQL transaction a transactional handler runs in (its completion record commits with
   * it); `undefined` for other handlers. See `webhooks.transactions`.
   */
  transaction?: PaymentsTransaction;
  /**
   * Current-state handling (`@OnPaymentEvent(type, { current: true })` or `webhooks.currentState`): the
   * intent as retrieved just before this run, whose `state` is the event's state. Undefined for a handler
   * that did not opt in and for an event that names no intent.
   */
  intent?: PaymentIntent | SetupIntent;
}

/** The runtime side of the name `PaymentEventContext`, for the same reason as `PaymentEvent`'s (TS1272). */
export const PaymentEventContext: Readonly<Record<never, never>> = Object.freeze({});

/**
 * The documented event names at runtime (the `PaymentEventTypeMap` keys the reference lists). Wildcards
 * expand against these plus any name a handler subscribes to by its exact name (declaration merging).
 */
export const PAYMENT_EVENT_TYPES: readonly PaymentEventType[] = Object.freeze([
  ...PAYMENT_INTENT_STATES.map((state) => `payment_intent.${state}` as const),
  ...SETUP_INTENT_STATES.map((state) => `setup_intent.${state}` as const),
  ...CHARGE_EVENT_STATES.map((state) => `charge.${state}` as const),
] satisfies PaymentEventType[]);

/** The signature every `@OnPaymentEvent` method must be callable with, for the patterns `P`. */
export type PaymentEventHandlerFn<P extends PaymentEventPattern = PaymentEventPattern> = (
  event: PaymentEvent<PaymentEventTypesOf<P>>,
  ctx: PaymentEventContext,
) => unknown;
