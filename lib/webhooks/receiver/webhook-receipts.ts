import type { WebhookRejectionReason } from '../contracts/payments-webhooks.messages.js';
import type { PaymentsWebhookReceipt } from '../contracts/payments-webhook-receipt.types.js';

/**
 * Whether the sender should send a delivery again, from its status alone: a server-side failure (5xx),
 * a timeout (408), an event in flight elsewhere (409) or a rate limit (429). Everything else, a 2xx
 * or a refusal of the input, would get the same answer again. Read from the status, not from a list of
 * outcomes, so an outcome added later (with its status) is answered right without an edit here.
 */
export function shouldRetry(status: number): boolean {
  return status >= 500 || status === 408 || status === 409 || status === 429;
}

/** Receipts are a small set (outcome x status): made once, frozen, so no delivery allocates one. */
const ANSWERED = new Map<string, PaymentsWebhookReceipt>();
const REFUSED = new Map<string, PaymentsWebhookReceipt>();
/** Outcomes are the processors' own words; the bound only guards a custom processor that invents many. */
const MAX_CACHED = 64;

/** The receipt of a verified event the processor answered with `status` and `outcome`. */
export function answeredReceipt(status: number, outcome: string): PaymentsWebhookReceipt {
  const cached = ANSWERED.get(outcome);
  if (cached !== undefined && cached.status === status) return cached;
  const receipt: PaymentsWebhookReceipt = Object.freeze({
    received: true,
    status,
    outcome,
    retry: shouldRetry(status),
    body: Object.freeze({ received: true as const, outcome }),
  });
  if (cached === undefined && ANSWERED.size < MAX_CACHED) ANSWERED.set(outcome, receipt);
  return receipt;
}

/** The receipt of a refused delivery; with `missingHeaders` a fresh one (they differ per delivery). */
export function refusedReceipt(
  status: number,
  reason: WebhookRejectionReason,
  missingHeaders?: readonly string[],
): PaymentsWebhookReceipt {
  if (missingHeaders === undefined || missingHeaders.length === 0) {
    const cached = REFUSED.get(reason);
    if (cached !== undefined && cached.status === status) return cached;
    const receipt = makeRefused(status, reason, undefined);
    if (cached === undefined && REFUSED.size < MAX_CACHED) REFUSED.set(reason, receipt);
    return receipt;
  }
  return makeRefused(status, reason, Object.freeze([...missingHeaders]));
}

function makeRefused(
  status: number,
  reason: WebhookRejectionReason,
  missingHeaders: readonly string[] | undefined,
): PaymentsWebhookReceipt {
  return Object.freeze({
    received: false,
    status,
    outcome: 'refused',
    retry: shouldRetry(status),
    error: reason,
    ...(missingHeaders ? { missingHeaders } : {}),
    body: Object.freeze({ received: false as const, error: reason }),
  });
}
