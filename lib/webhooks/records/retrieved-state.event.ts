import type { PaymentIntent, SetupIntent } from '../../client/payments.types.js';
import { uuidV5 } from '../../core/payments.uuid.js';
import type { RecordIntentKind } from '../contracts/event-record.types.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';

/**
 * Namespace of the ids of reconciled events: `uuidV5('payment_intent:<id>:<state>', this)`. A fixed
 * random UUID of this package, so no other name-based id shares it.
 */
export const RECONCILED_EVENT_NAMESPACE = '6f1d4c1e-8f0a-4d6b-9a57-2c8e3b9d7a41';

/**
 * The event of a state found by a retrieve of the intent (reconciliation, and current-state handling
 * when a delivery is superseded): the retrieved intent as its data. Its `id` is stable for that
 * (intent, state), `uuidV5('<kind>:<intent id>:<state>', RECONCILED_EVENT_NAMESPACE)`: a handler that
 * keys its effect on `event.id` sees one id per occurrence, however many retrieves find it, and never a
 * real event's (the service's ids are not derived from this namespace; a version-5 id never equals a
 * random one). `webhook_id` is empty: no endpoint delivered it; `ctx.source` is `'reconciliation'`.
 */
export function reconciledEvent(
  kind: RecordIntentKind,
  state: string,
  intent: PaymentIntent | SetupIntent,
): PaymentEvent {
  return {
    id: uuidV5(`${kind}:${String(intent.id).toLowerCase()}:${state}`, RECONCILED_EVENT_NAMESPACE),
    webhook_id: '',
    event: `${kind}.${state}`,
    data: { [kind]: intent },
    metadata: null,
  } as PaymentEvent;
}
