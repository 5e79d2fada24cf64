import { createHmac, randomUUID } from 'node:crypto';
import {
  BENCH_SECRET,
  ENDPOINT_ID,
  EVENT_TYPE,
  PAYLOAD_BYTES,
  SIGNATURE_HEADER,
  STRIPE_SECRET,
} from './bench-constants.js';

const ID_SLOT = '00000000-0000-4000-8000-000000000000';

/**
 * Pads a JSON template (with `ID_SLOT`s) so that the body is exactly `PAYLOAD_BYTES` long once the
 * slots hold an id of the same length, and returns the text around the slots (`parts.join(id)`).
 */
function splitTemplate(build, idLength, bytes = PAYLOAD_BYTES) {
  const probe = JSON.stringify(build(ID_SLOT.slice(0, idLength).padEnd(idLength, '0'), ''));
  const padding = bytes - Buffer.byteLength(probe);
  if (padding < 0) throw new Error(`payload template is ${Buffer.byteLength(probe)} bytes, over ${bytes}`);
  const marker = '\u0000ID\u0000';
  const text = JSON.stringify(build(marker, 'x'.repeat(padding)));
  // The text around every slot: each slot gets the same id.
  return text.split(JSON.stringify(marker).slice(1, -1));
}

/** A WebhookEventPayload of the service (1 KB, or `bytes`), `payment_intent.succeeded`, with a fresh event id. */
const oursPayload = (id, pad) => ({
  id,
  webhook_id: ENDPOINT_ID,
  event: EVENT_TYPE,
  data: {
    payment_intent: {
      // Each delivery a new payment: a terminal state is claimed once per intent.
      id,
      state: 'succeeded',
      amount: 4999,
      currency: 'EUR',
      description: 'Order 10042',
      padding: pad,
    },
  },
  metadata: { order_id: '10042', customer: 'c-7781' },
});
const ours = splitTemplate(oursPayload, 36);
/** Templates of other sizes (growth runs), made once each. */
const oursBySize = new Map([[PAYLOAD_BYTES, ours]]);

/** A Stripe `payment_intent.succeeded` event (1 KB, test mode) with a fresh `evt_` id. */
const stripe = splitTemplate(
  (id, pad) => ({
    id,
    object: 'event',
    api_version: '2025-12-15.clover',
    created: 1763800000,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: EVENT_TYPE,
    data: {
      object: {
        id: 'pi_3Q0benchmarkintent01',
        object: 'payment_intent',
        amount: 4999,
        currency: 'eur',
        status: 'succeeded',
        description: 'Order 10042',
        metadata: { order_id: '10042', padding: pad },
      },
    },
  }),
  36,
);

/** One signed delivery of our scheme: body and headers, as autocannon sends them. */
export function signedDelivery(id = randomUUID(), bytes = PAYLOAD_BYTES) {
  let template = oursBySize.get(bytes);
  if (template === undefined) oursBySize.set(bytes, (template = splitTemplate(oursPayload, 36, bytes)));
  const body = template.join(id);
  const signature = createHmac('sha256', BENCH_SECRET).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature } };
}

/** One Stripe-signed delivery (`stripe-signature: t=<ts>,v1=<hmac of "t.body">`), signed at `timestamp`. */
export function stripeSignedDelivery(
  timestamp = Math.floor(Date.now() / 1000),
  id = `evt_${randomUUID().replaceAll('-', '')}`,
) {
  const body = stripe.join(id);
  const v1 = createHmac('sha256', STRIPE_SECRET).update(`${timestamp}.${body}`).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': `t=${timestamp},v1=${v1}` } };
}

/**
 * A pool of distinct pre-signed deliveries, so that signing does not load the client during a run.
 * `next()` hands each one out once per `rewind()`; past the end it signs on the fly (counted in
 * `signedOnTheFly`), so an id never repeats within a run, whatever the throughput.
 */
export class DeliveryPool {
  /** @param {(index: number) => { body: string, headers: Record<string, string> }} sign @param {number} size */
  constructor(sign, size) {
    this.sign = sign;
    this.items = new Array(size);
    for (let i = 0; i < size; i++) this.items[i] = sign(i);
    this.cursor = 0;
    this.signedOnTheFly = 0;
    /** Deliveries sent again because a wrk run used up the pool (wrk cannot sign on the fly). */
    this.repeated = 0;
  }

  next() {
    if (this.cursor < this.items.length) return this.items[this.cursor++];
    this.signedOnTheFly++;
    return this.sign(this.cursor++);
  }

  /** Handed out since the last rewind. */
  get used() {
    return this.cursor;
  }

  /** Starts again from the first delivery (a new server process has never seen any of them). */
  rewind() {
    this.cursor = 0;
    this.signedOnTheFly = 0;
    this.repeated = 0;
  }
}
