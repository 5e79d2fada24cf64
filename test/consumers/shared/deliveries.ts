// Copied into each consumer app as src/deliveries.ts by test/consumers/run.mjs (one copy of the checks,
// four apps). No relative imports, so the same file compiles as ESM and as CommonJS.
import type { PaymentsService } from 'nestjs-payments';
import { createRequire } from 'node:module';
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
  /** The app's client, configured against the runner's simulator. */
  payments: PaymentsService;
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
 * The client creates and retrieves an intent; one signed delivery is answered 200 handled, the same delivery again 200 duplicate, a delivery signed
 * with another secret 401: and the handler ran exactly once.
 */
export async function checkDeliveries(check: DeliveryCheck): Promise<void> {
  const created = await check.payments.paymentIntents.create({ amount: 1500 });
  const retrieved = await check.payments.paymentIntents.retrieve(created.id);
  if (retrieved.id !== created.id || retrieved.amount !== 1500 || retrieved.state !== 'requires_payment_method') {
    throw new Error(`client: retrieved ${JSON.stringify(retrieved)} for the intent created as ${created.id}`);
  }
  console.log(`[consumer] [E1] [E2] client: created and retrieved intent ${created.id} (${retrieved.state})`);

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

/**
 * No dual-package hazard: `require('nestjs-payments')` (what a CommonJS app's `import` compiles to) and
 * a real `import()` of it (ESM) give the very same classes, so there is one copy of every class and DI
 * token in the process. `service` is what the app's container injected.
 */
export async function checkOneCopy(service: PaymentsService): Promise<void> {
  const esm = await import('nestjs-payments');
  const esmTesting = await import('nestjs-payments/testing');
  const cjs = createRequire(`${process.cwd()}/package.json`)('nestjs-payments') as typeof esm;
  if (esm.PaymentsService !== cjs.PaymentsService || !(service instanceof esm.PaymentsService)) {
    throw new Error('import() and require() of nestjs-payments gave two PaymentsService classes');
  }
  if (esm.PaymentsModule !== cjs.PaymentsModule || esmTesting.createPaymentEvent !== createPaymentEvent) {
    throw new Error('import() and require() of nestjs-payments gave two copies of the package');
  }
  console.log('[consumer] one copy: import() and require() of nestjs-payments give the same PaymentsService');
}
