import type { WebhookRejectionReason } from './payments-webhooks.messages.js';

/**
 * One delivery as any transport hands it to `PaymentsWebhookReceiver.receive`: the bytes exactly as the
 * service sent them and the headers it sent with them (the signature headers above all). Nothing else is
 * trusted: whatever a broker or a gateway adds is not read by the checks.
 */
export interface PaymentsWebhookDelivery {
  /** The raw body, byte for byte (a string is read as its UTF-8 bytes). */
  body: Buffer | Uint8Array | string;
  /** The headers as sent; names in any case (they are compared lower-cased), values strings or lists of strings. */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /**
   * `false` when the delivery came over plain HTTP: refused with 403 while `webhooks.requireHttps` is
   * on. Leave it out for a message of a broker or a function's event (the edge received it).
   */
  secure?: boolean;
}

/** The HTTP body of a verified delivery: `outcome` says what became of the event. */
export interface WebhookReceiptBody {
  received: true;
  outcome: string;
}

/** The HTTP body of every refused delivery: the reason code only, never internals. */
export interface WebhookRejectionBody {
  received: false;
  error: WebhookRejectionReason;
}

/**
 * What the receiver answers for one delivery, as a value (the answer table of docs/webhooks.md): the
 * HTTP status it stands for, whether the sender should send it again, and the body a route writes.
 * - verified: `received: true`, `outcome` from the processor ('handled', 'duplicate', 'busy', 'failed',
 *   'unhandled', 'store_unavailable', 'enqueued', ...), `status` its status;
 * - refused: `received: false`, `outcome: 'refused'`, `error` the reason code ('invalid_signature', ...).
 *
 * `retry` is read from the status alone (5xx, 408, 409, 429: true), so an outcome added later gets the
 * right answer without a list to edit. Receipts without `missingHeaders` are shared and frozen.
 */
export interface PaymentsWebhookReceipt {
  readonly received: boolean;
  /** The HTTP status the answer stands for: 200, 409, 500, 503 for a verified event; 4xx/5xx for a refusal. */
  readonly status: number;
  /** What became of the delivery: the processor's outcome, or `'refused'`. */
  readonly outcome: string;
  /** Whether sending the same delivery again may succeed (a broker retries it later; 2xx and 4xx refusals: never). */
  readonly retry: boolean;
  /** The reason of a refusal (`'invalid_signature'`, `'payload_too_large'`, ...). */
  readonly error?: WebhookRejectionReason;
  /**
   * A refused delivery that lacks signature headers of the configured scheme: their names (known when the
   * verifier is a scheme object, which can say what it signs with).
   */
  readonly missingHeaders?: readonly string[];
  /** What an HTTP route writes: `{ received: true, outcome }` or `{ received: false, error }`. */
  readonly body: Readonly<WebhookReceiptBody> | Readonly<WebhookRejectionBody>;
}
