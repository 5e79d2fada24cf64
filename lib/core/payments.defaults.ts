/**
 * Defaults every part of the module agrees on. The core imports nothing else of the package, so the
 * client, the receiver and the queue can all read these without depending on one another.
 */

/** Default route of the webhook receiver (relative to the app's global prefix). */
export const DEFAULT_WEBHOOKS_PATH = 'payments/webhooks';

/**
 * How long a completed (event, handler) is remembered, and a never-completed key keeps its attempt
 * count, in seconds: 3 days. The one place the receiver, the queue and every built-in store read it.
 */
export const DEFAULT_RETENTION_SECONDS = 259_200;

/** Default value of the `X-Api-Version` header: the only value the reference shows. */
export const DEFAULT_API_VERSION = '1';

/** Name of the instance `PaymentsModule.forRoot` registers when no `name` is given. */
export const DEFAULT_PAYMENTS_INSTANCE = 'default';

/** Default BullMQ queue name of the unnamed instance; a named one appends `-${name}`. */
export const DEFAULT_QUEUE_NAME = 'payments-webhooks';
