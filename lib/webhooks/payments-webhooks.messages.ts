/** Logger name and message texts of the webhook receiver, in one file (as `@nestjs/bullmq` does). */

/** Name of the Nest `Logger` every webhook log line goes through. */
export const PAYMENTS_WEBHOOKS_LOGGER = 'PaymentsWebhooks';

/**
 * Machine-readable reasons a delivery is refused, sent as `{ received: false, error }` and logged.
 * They name the rule, never a header value, a secret or the body.
 */
export type WebhookRejectionReason =
  | 'webhooks_disabled'
  | 'https_required'
  | 'payload_too_large'
  | 'raw_body_unavailable'
  | 'unsupported_media_type'
  | 'invalid_signature'
  | 'invalid_json'
  | 'invalid_payload'
  | 'unknown_endpoint'
  | 'internal_error';

export const RAW_BODY_MISSING_MESSAGE =
  'Webhook delivery refused with 500: the raw request body is not available, so its signature cannot be verified ' +
  '(a re-serialised body would not match). Fix: create the app with NestFactory.create(AppModule, { rawBody: true }) ' +
  '(Express or Fastify), or with { bodyParser: false } on Express so that the payments middleware reads the body.';

export const QUEUE_UNAVAILABLE_MESSAGE =
  'is set to { queue }, but queued processing is not available in this build';
