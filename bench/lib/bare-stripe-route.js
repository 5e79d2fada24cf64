import { createHmac, timingSafeEqual } from 'node:crypto';
import { STRIPE_SECRET } from './bench-constants.js';

const TOLERANCE_SECONDS = 300;

/**
 * What a careful hand-written route does with Stripe's scheme (`stripe-signature: t=<ts>,v1=<hex>`,
 * HMAC-SHA256 of `${t}.${rawBody}`): timestamp within 300 s, constant-time comparison of every v1,
 * then JSON.parse. Returns the parsed event, or undefined when the signature does not hold. The
 * baseline of the peer (same work as stripe.webhooks.constructEvent, without the module around it).
 */
export function verifyStripeAndParse(rawBody, header, nowSeconds = Math.floor(Date.now() / 1000)) {
  if (typeof header !== 'string' || !Buffer.isBuffer(rawBody)) return undefined;
  let timestamp;
  const signatures = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (key === 't') timestamp = value;
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || signatures.length === 0) return undefined;
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return undefined;
  const expected = createHmac('sha256', STRIPE_SECRET).update(`${timestamp}.`).update(rawBody).digest();
  if (!signatures.some((s) => s.length === expected.length && timingSafeEqual(s, expected))) return undefined;
  return JSON.parse(rawBody.toString('utf8'));
}
