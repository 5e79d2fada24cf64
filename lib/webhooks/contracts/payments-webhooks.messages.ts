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
  | 'request_timeout'
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

export const QUEUE_UNAVAILABLE_MESSAGE = 'is set to { queue }, but queued processing is not available in this build';

/** Problems `@OnPaymentEvent()` refuses when a class is defined (thrown as `PaymentsInvalidArgumentError`). */
export const ON_PAYMENT_EVENT_MESSAGES = {
  optionsNotLast: 'must be event names or wildcards, with the options object last',
  noEventName: 'must name at least one event name or wildcard',
  notAMethod: 'is not a method: @OnPaymentEvent() decorates methods only',
  badInstanceName: "must be the non-empty name of a PaymentsModule instance, e.g. { instance: 'eu' }",
  badHandlerId: "must be 1 to 128 letters, digits, '.', '_' or '-', e.g. { handlerId: 'BillingPaymentListener.paid' }",
  badCurrent:
    "must be a boolean: { current: true } runs the handler only while the intent is in the event's state (docs/current-state.md)",
  twoInstanceNames:
    'differs between two @OnPaymentEvent() of one method: a method listens to one instance (declare one method per instance)',
} as const;

export { STORE_ARGUMENT_MESSAGES } from '../../errors/payments.messages.js';

/** A store answered something its protocol does not allow (a bug or a foreign script on the same keys). */
export const unexpectedStoreReplyMessage = (store: string, operation: string): string =>
  `${store}: unexpected ${operation} reply`;

/** A ROLLBACK that itself failed: the connection is discarded rather than returned to the pool. */
export const ROLLBACK_FAILED_MESSAGE = 'ROLLBACK failed';
