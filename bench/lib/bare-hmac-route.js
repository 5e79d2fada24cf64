import { createHmac, timingSafeEqual } from 'node:crypto';
import { BENCH_SECRET, SIGNATURE_HEADER } from './bench-constants.js';

const HEX_SIGNATURE = /^[0-9a-f]{64}$/i;

/**
 * What a careful hand-written route does with our scheme: HMAC-SHA256 of the raw bytes, compared in
 * constant time after a length check, then JSON.parse. Returns the parsed event, or undefined when the
 * signature is missing or wrong. Shared by the Express and Fastify baselines.
 */
export function verifyAndParse(rawBody, headers) {
  const given = headers[SIGNATURE_HEADER];
  if (typeof given !== 'string' || !HEX_SIGNATURE.test(given) || !Buffer.isBuffer(rawBody)) return undefined;
  const expected = createHmac('sha256', BENCH_SECRET).update(rawBody).digest();
  const received = Buffer.from(given, 'hex');
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return undefined;
  return JSON.parse(rawBody.toString('utf8'));
}
