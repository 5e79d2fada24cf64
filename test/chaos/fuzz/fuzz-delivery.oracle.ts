import { createHmac } from 'node:crypto';
import { PAYMENT_EVENT_TYPES } from '../../../lib/webhooks/index.js';
import { FUZZ_ENDPOINT_ID, FUZZ_HMAC, FUZZ_MAX_BODY_BYTES, type FuzzHandlerName } from './fuzz-receiver.fixture.js';

/*
 * The fuzz suite's own, independent idea of a delivery: how a sender signs one (computed here with
 * node:crypto, not with the library's signer) and what a valid payload is (the documented payload rules,
 * re-implemented). The receiver's answers are checked against this.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `v1,<base64>` of HMAC-SHA256(key bytes, `${id}.${timestamp}.${body}`) for a `whsec_` secret. */
export function standardSignature(secret: string, msgId: string, timestamp: string, body: Buffer): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestamp}.`).update(body).digest('base64')}`;
}

/** `sha256=<hex>` of HMAC-SHA256(secret, `${timestamp}.${body}`), the fuzz apps' HMAC scheme. */
export function hmacSignature(secret: string, timestamp: string, body: Buffer): string {
  return `${FUZZ_HMAC.prefix}${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/** What a verified body is, per the documented payload rules: a WebhookEventPayload the receiver must hand to its handlers, or not. */
export type PayloadVerdict =
  { valid: true; id: string; type: string; endpointAllowed: boolean; failing: boolean } | { valid: false };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function judgePayload(body: Buffer): PayloadVerdict {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { valid: false };
  }
  if (!isPlainObject(value)) return { valid: false };
  const { id, webhook_id: webhookId, event, data, metadata } = value;
  if (typeof id !== 'string' || !UUID.test(id)) return { valid: false };
  if (typeof webhookId !== 'string' || !UUID.test(webhookId)) return { valid: false };
  if (typeof event !== 'string' || event.trim() === '') return { valid: false };
  if (!isPlainObject(data)) return { valid: false };
  if (metadata !== undefined && metadata !== null && !isPlainObject(metadata)) return { valid: false };
  const failing = isPlainObject(metadata) && metadata['fuzz_fail'] === true;
  return { valid: true, id, type: event, endpointAllowed: webhookId.toLowerCase() === FUZZ_ENDPOINT_ID, failing };
}

/** The fuzz handlers bound to an event type ('*' covers the documented names only). */
export function boundHandlers(type: string): FuzzHandlerName[] {
  const documented = (PAYMENT_EVENT_TYPES as readonly string[]).includes(type);
  const handlers: FuzzHandlerName[] = [];
  if (documented) handlers.push('any');
  if (type === 'payment_intent.succeeded') handlers.push('succeeded');
  return handlers;
}

/** What the receiver must do with one request. */
export interface DeliveryExpectation {
  /** Signed with a configured secret over exactly these bytes, timestamp inside the window. */
  signatureValid: boolean;
  /** Valid signature, valid payload, accepted endpoint, within maxBodyBytes: handlers may run. */
  accepted: boolean;
  eventId: string | undefined;
  eventType: string | undefined;
  failing: boolean;
  /**
   * The status the receiver must answer when the request surely reaches it (JSON content type,
   * canonical path, no keys a framework's JSON parser refuses); otherwise that status or any 4xx.
   * `undefined`: any 4xx.
   */
  exactStatus: number | undefined;
  /** True when a framework may answer first (another content type, path spelling, `__proto__` keys). */
  frameworkMayRefuse: boolean;
}

export function isOversize(body: Buffer): boolean {
  return body.length > FUZZ_MAX_BODY_BYTES;
}
