import { HttpException } from '@nestjs/common';
import type { WebhookRejectionReason } from '../contracts/payments-webhooks.messages.js';

/** The body of every refused delivery: the reason code only, never internals. */
export interface WebhookRejectionBody {
  received: false;
  error: WebhookRejectionReason;
}

/**
 * A delivery the receiver refuses, with the status of the answer table in docs/webhooks.md (401, 400, 403, 404, 413,
 * 415, 500) and a body of `{ received: false, error: reason }`. The webhook controller's own filter
 * writes it, so a host's global exception filter cannot change the answer the service sees.
 */
export class WebhookRejectionException extends HttpException {
  constructor(
    status: number,
    readonly reason: WebhookRejectionReason,
  ) {
    super({ received: false, error: reason } satisfies WebhookRejectionBody, status);
  }
}
