// Copied into each consumer app as src/deliveries.ts by test/consumers/run.mjs (one copy of the checks,
// four apps). No relative imports, so the same file compiles as ESM and as CommonJS.
import { createPaymentEvent } from 'nestjs-payments/testing';

/** A delivery ready to send: the exact bytes and the headers that sign them. */
export interface SignedDelivery {
  rawBody: string;
  headers: Record<string, string>;
}

export interface DeliveryCheck {
  /** Address of the running app's webhook route. */
  url: string;
  /** Signs a payload with the app's verifier scheme and the given secret. */
  sign: (payload: object, secret: string) => SignedDelivery;
  /** The secret the app's verifier holds. */
  secret: string;
  /** Another secret of the same scheme, which the app does not hold. */
  otherSecret: string;
  /** How many times the app's handler has run so far. */
  runs: () => number;
}

async function post(url: string, delivery: SignedDelivery): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.rawBody });
  return { status: response.status, body: await response.text() };
}

function expectAnswer(label: string, got: { status: number; body: string }, status: number, fragment: string): void {
  if (got.status !== status || !got.body.includes(fragment)) {
    throw new Error(`${label}: expected ${status} with ${fragment}, got ${got.status} ${got.body}`);
  }
  console.log(`[consumer] ${label}: ${got.status} ${got.body}`);
}

/**
 * One signed delivery answered 200 handled, the same delivery again 200 duplicate, a delivery signed
 * with another secret 401: and the handler ran exactly once.
 */
export async function checkDeliveries(check: DeliveryCheck): Promise<void> {
  const event = createPaymentEvent('payment_intent.succeeded', { data: { payment_intent: { amount: 1500 } } });
  const delivery = check.sign(event, check.secret);
  expectAnswer('signed delivery', await post(check.url, delivery), 200, '"outcome":"handled"');
  expectAnswer('[W4] same delivery again', await post(check.url, delivery), 200, '"outcome":"duplicate"');
  const other = createPaymentEvent('payment_intent.succeeded');
  const forged = check.sign(other, check.otherSecret);
  expectAnswer('[W5] forged delivery', await post(check.url, forged), 401, '"error":"invalid_signature"');
  const signed = check.sign(other, check.secret);
  // Same JSON, one byte more: the signature covers the raw bytes, so this must be refused.
  const tampered = { headers: signed.headers, rawBody: `${signed.rawBody.slice(0, -1)} }` };
  expectAnswer('[W1] tampered body', await post(check.url, tampered), 401, '"error":"invalid_signature"');
  if (check.runs() !== 1) throw new Error(`the handler ran ${check.runs()} times; expected exactly once`);
  console.log('[consumer] [W4] handler ran once');
}
