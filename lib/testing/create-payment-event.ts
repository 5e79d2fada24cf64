import { randomUUID } from 'node:crypto';
import type { PaymentIntent, SetupIntent } from '../client/payments.types.js';
import {
  CHARGE_EVENT_STATES,
  type PaymentEvent,
  type PaymentEventType,
} from '../webhooks/contracts/payment-event.types.js';

/** Fields of the event to replace. `data` is merged one level deep (the intent object is merged too). */
export interface PaymentEventOverrides {
  id?: string;
  webhook_id?: string;
  metadata?: Record<string, unknown> | null;
  data?: {
    payment_intent?: Partial<PaymentIntent>;
    setup_intent?: Partial<SetupIntent>;
    [field: string]: unknown;
  };
}

/** The intent state a `charge.<state>` event names; `succeeded` for a charge name added by declaration merging. */
const chargeIntentState = (suffix: string): string =>
  (CHARGE_EVENT_STATES as readonly string[]).includes(suffix) ? suffix : 'succeeded';

/**
 * Builds a valid WebhookEventPayload for `type`: random UUID `id` and `webhook_id`, `metadata: null`,
 * and `data.payment_intent` (payment and charge events) or `data.setup_intent` (setup events) with a
 * random id and the state the event names. Charge events carry an `automatic_async` intent.
 *
 * @example createPaymentEvent('payment_intent.succeeded', { data: { payment_intent: { amount: 500 } } })
 */
export function createPaymentEvent<T extends PaymentEventType>(
  type: T,
  overrides: PaymentEventOverrides = {},
): PaymentEvent<T> {
  const [kind, suffix = ''] = type.split('.') as [string, string?];
  const { data: dataOverrides = {}, ...top } = overrides;
  const { payment_intent: paymentOverride, setup_intent: setupOverride, ...otherData } = dataOverrides;

  let data: Record<string, unknown>;
  if (kind === 'setup_intent') {
    data = { setup_intent: { id: randomUUID(), state: suffix, ...setupOverride } };
  } else {
    const charge = kind === 'charge';
    const intent: PaymentIntent = {
      id: randomUUID(),
      state: charge ? chargeIntentState(suffix) : suffix,
      amount: 1000,
      ...(charge ? { capture_method: 'automatic_async' } : {}),
      ...paymentOverride,
    };
    data = { payment_intent: intent };
    if (setupOverride !== undefined) data['setup_intent'] = setupOverride;
  }
  if (kind === 'setup_intent' && paymentOverride !== undefined) data['payment_intent'] = paymentOverride;

  return {
    id: randomUUID(),
    webhook_id: randomUUID(),
    event: type,
    data: { ...data, ...otherData },
    metadata: null,
    ...top,
  } as PaymentEvent<T>;
}
