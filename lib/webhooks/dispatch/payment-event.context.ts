import type { PaymentIntent, SetupIntent } from '../../client/payments.types.js';
import { PaymentsError } from '../../errors/payments.errors.js';
import { isUuid, lowerCaseUuid } from '../../core/payments.uuid.js';
import type { HandledPaymentState, PaymentEvent, PaymentEventContext } from '../contracts/payment-event.types.js';
import type { HandledState } from '../contracts/idempotency-store.interface.js';

/** What `retrieveIntent()` needs from the API client (`PaymentsService` provides it). */
export interface PaymentIntentsRetriever {
  paymentIntents: { retrieve(id: string): Promise<PaymentIntent> };
  setupIntents: { retrieve(id: string): Promise<SetupIntent> };
}

/** `ctx.retrieveIntent()` was called on an event whose `data` names no intent. */
export class PaymentEventIntentMissingError extends PaymentsError {
  override readonly name = 'PaymentEventIntentMissingError';
  constructor(
    readonly eventId: string,
    readonly eventType: string,
    field: string,
  ) {
    super(
      `Event ${eventId} (${eventType}) names no intent: data.${field}.id is missing, so retrieveIntent() cannot know which intent to GET`,
    );
  }
}

/**
 * The id of the intent `value` names (an id, or an object with one), canonical: lower-cased, and only
 * when it has a UUID's shape, so that `ABC...` and `abc...` claim and forget the same keys and nothing
 * else (a NUL byte, a 10 kB string) ever reaches a store key or a statement. Undefined otherwise.
 */
export const intentId = (value: unknown): string | undefined => {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : value;
  return isUuid(id) ? lowerCaseUuid(id) : undefined;
};

/**
 * GETs the intent an event names: `setup_intent.*` -> `GET /setup_intents/{data.setup_intent.id}`;
 * `payment_intent.*` and `charge.*` -> `GET /payment_intents/{data.payment_intent.id}`. For a name
 * outside those families, whichever of the two `data` carries (payment intent first).
 */
export async function retrieveIntentOf(
  event: PaymentEvent,
  client: PaymentIntentsRetriever,
): Promise<PaymentIntent | SetupIntent> {
  const data = event.data as Record<string, unknown>;
  const family = event.event.slice(0, event.event.indexOf('.'));
  if (family === 'setup_intent') {
    const id = intentId(data['setup_intent']);
    if (!id) throw new PaymentEventIntentMissingError(event.id, event.event, 'setup_intent');
    return client.setupIntents.retrieve(id);
  }
  const paymentId = intentId(data['payment_intent']);
  if (paymentId) return client.paymentIntents.retrieve(paymentId);
  if (family !== 'payment_intent' && family !== 'charge') {
    const setupId = intentId(data['setup_intent']);
    if (setupId) return client.setupIntents.retrieve(setupId);
  }
  throw new PaymentEventIntentMissingError(event.id, event.event, 'payment_intent');
}

const NOTHING_HANDLED: readonly HandledPaymentState[] = Object.freeze([]);

/**
 * `ctx.handled` from a claim's `handled` (times in ms): frozen, sorted by state then handler, the
 * handler left out where the store did not tell it. Undefined when the store reported nothing.
 */
export function handledStatesOf(
  handled: readonly HandledState[] | undefined,
): readonly HandledPaymentState[] | undefined {
  if (handled === undefined) return undefined;
  if (handled.length === 0) return NOTHING_HANDLED;
  const states = handled.map((h): HandledPaymentState =>
    Object.freeze(
      h.handler === undefined
        ? { state: h.state, at: new Date(h.at) }
        : { state: h.state, handler: h.handler, at: new Date(h.at) },
    ),
  );
  states.sort((a, b) => compare(a.state, b.state) || compare(a.handler ?? '', b.handler ?? ''));
  return Object.freeze(states);
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Builds the second argument of a handler. `handled`: the claim's (see `PaymentEventContext.handled`);
 * `intent`: the intent current-state handling retrieved for this run (`ctx.intent`), absent otherwise.
 */
export function createPaymentEventContext(
  event: PaymentEvent,
  client: PaymentIntentsRetriever,
  deliveryAttempt: number,
  receivedAt: Date,
  source: 'webhook' | 'reconciliation' = 'webhook',
  handled?: readonly HandledState[],
  intent?: PaymentIntent | SetupIntent,
): PaymentEventContext {
  if (intent === undefined) {
    return Object.freeze({
      retrieveIntent: () => retrieveIntentOf(event, client),
      deliveryAttempt,
      receivedAt,
      source,
      handled: handledStatesOf(handled),
    });
  }
  return Object.freeze({
    retrieveIntent: () => retrieveIntentOf(event, client),
    deliveryAttempt,
    receivedAt,
    source,
    handled: handledStatesOf(handled),
    intent,
  });
}
