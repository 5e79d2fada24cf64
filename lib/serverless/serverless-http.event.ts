import type { PaymentsWebhookReceipt } from '../webhooks/contracts/payments-webhook-receipt.types.js';

/**
 * The HTTP event a function platform hands to its handler, as much of it as is read here: API Gateway
 * REST (payload 1.0: `headers` in the sender's case, `multiValueHeaders`), HTTP API (payload 2.0) and
 * function URLs (lower-cased `headers`, repeated values joined with commas). The body is the text as
 * received, or its bytes in base64 when `isBase64Encoded`.
 */
export interface ServerlessHttpEvent {
  body?: string | null;
  isBase64Encoded?: boolean;
  headers?: Readonly<Record<string, string | undefined>> | null;
  multiValueHeaders?: Readonly<Record<string, readonly string[] | undefined>> | null;
  [key: string]: unknown;
}

/** What such a handler returns: the status, headers and body of the HTTP answer. */
export interface ServerlessHttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** A delivery as it travels from the edge to a broker: the body byte for byte, the headers as sent. */
export interface PaymentsForwardedDelivery {
  body: Buffer;
  /** Lower-cased names, as Node gives them; hop-by-hop headers left out. */
  headers: Record<string, string>;
}

/** Headers that describe one hop, not the delivery: never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'host',
  'content-length',
]);

/** The body's bytes exactly as the service sent them (base64-decoded when the platform encoded them). */
export function eventBody(event: ServerlessHttpEvent): Buffer {
  const body = event.body ?? '';
  return event.isBase64Encoded === true ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
}

/**
 * The event's headers with lower-cased names, strings only. A REST API's `multiValueHeaders` win over its
 * single `headers` (repeated values joined with `, `, as Node and the HTTP APIs join them).
 */
export function eventHeaders(event: ServerlessHttpEvent): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (typeof value === 'string') out[name.toLowerCase()] = value;
  }
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    const strings = Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : [];
    if (strings.length > 0) out[name.toLowerCase()] = strings.join(', ');
  }
  return out;
}

/** The headers worth carrying to a broker: everything the service sent but the hop-by-hop ones. */
export function forwardedHeaders(
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower)) continue;
    if (typeof value === 'string') out[lower] = value;
    else if (Array.isArray(value)) out[lower] = value.join(', ');
  }
  return out;
}

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });

/** The function's answer for a body: JSON, the status given. */
export function jsonResult(statusCode: number, body: unknown): ServerlessHttpResult {
  return { statusCode, headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}

/** The function's answer for a receipt: its status and the body a route would write. */
export function receiptResult(receipt: PaymentsWebhookReceipt): ServerlessHttpResult {
  return jsonResult(receipt.status, receipt.body);
}
