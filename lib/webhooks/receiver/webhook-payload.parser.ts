import { isUuid, lowerCaseUuid } from '../../core/payments.uuid.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';

/** Why a verified body is not a WebhookEventPayload. */
export type WebhookPayloadProblem = 'invalid_json' | 'invalid_payload';

/** Result of `parseWebhookPayload`. */
export type WebhookPayloadParseResult =
  { ok: true; event: PaymentEvent } | { ok: false; problem: WebhookPayloadProblem; detail: string };

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};

/**
 * Parses the raw bytes of a delivery, after its signature was verified, into a WebhookEventPayload:
 * `id` and `webhook_id` UUIDs, `event` a non-empty string, `data` an object, `metadata` an object or
 * null (absent is read as null). `id` and `webhook_id` come back lower-case (canonical), whatever
 * case the sender used. Other fields are kept. `detail` names the failing field, never its value.
 */
export function parseWebhookPayload(rawBody: Buffer): WebhookPayloadParseResult {
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return { ok: false, problem: 'invalid_json', detail: 'body is not JSON' };
  }
  if (!isPlainObject(value)) return { ok: false, problem: 'invalid_payload', detail: 'body is not a JSON object' };
  const { id, webhook_id: webhookId, event, data, metadata } = value;
  if (!isUuid(id)) return { ok: false, problem: 'invalid_payload', detail: 'id is not a UUID' };
  if (!isUuid(webhookId)) {
    return { ok: false, problem: 'invalid_payload', detail: 'webhook_id is not a UUID' };
  }
  if (typeof event !== 'string' || event.trim() === '')
    return { ok: false, problem: 'invalid_payload', detail: 'event is not a non-empty string' };
  if (!isPlainObject(data)) return { ok: false, problem: 'invalid_payload', detail: 'data is not an object' };
  // An absent `metadata` is read as null: refusing it would make the service retry a valid event forever.
  if (metadata !== undefined && metadata !== null && !isPlainObject(metadata)) {
    return { ok: false, problem: 'invalid_payload', detail: 'metadata is neither an object nor null' };
  }
  if (metadata === undefined) value.metadata = null;
  // Canonical ids before anything is keyed on them (claims, job ids, logs, the handler's context):
  // a UUID is case-insensitive, so a redelivery of the same id in upper case is the same event.
  value.id = lowerCaseUuid(id);
  value.webhook_id = lowerCaseUuid(webhookId);
  return { ok: true, event: value as unknown as PaymentEvent };
}
