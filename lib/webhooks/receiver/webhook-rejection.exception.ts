import { HttpException } from '@nestjs/common';
import type { WebhookRejectionReason } from '../contracts/payments-webhooks.messages.js';
import type { WebhookRejectionBody } from '../contracts/payments-webhook-receipt.types.js';

export type { WebhookRejectionBody } from '../contracts/payments-webhook-receipt.types.js';

/**
 * A delivery the receiver refuses, with the status of the answer table in docs/webhooks.md (401, 400, 403, 404, 413,
 * 415, 500) and a body of `{ received: false, error: reason }`. Thrown by the checks, turned into a receipt by
 * `PaymentsWebhookReceiver`; `missingHeaders` names the signature headers a refused delivery lacked.
 */
export class WebhookRejectionException extends HttpException {
  constructor(
    status: number,
    readonly reason: WebhookRejectionReason,
    readonly missingHeaders?: readonly string[],
  ) {
    super({ received: false, error: reason } satisfies WebhookRejectionBody, status);
  }
}
