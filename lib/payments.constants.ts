/**
 * Injection tokens and metadata keys of the payments module. Every token lives here so that a
 * reader can see, in one place, what the module puts into the Nest container.
 */

/** Default route of the webhook receiver (relative to the app's global prefix). */
export const DEFAULT_WEBHOOKS_PATH = 'payments/webhooks';

/** Default value of the `X-Api-Version` header: the only value the reference shows. */
export const DEFAULT_API_VERSION = '1';

/** Token of the validated, frozen options (`ResolvedPaymentsOptions`). */
export const PAYMENTS_RESOLVED_OPTIONS = Symbol('PAYMENTS_RESOLVED_OPTIONS');

/** Token of the clock / sleep / random functions (`PaymentsRuntime`), injectable so tests are exact. */
export const PAYMENTS_RUNTIME = Symbol('PAYMENTS_RUNTIME');

/** Token of the static webhook route path chosen when the module was defined. */
export const PAYMENTS_WEBHOOKS_PATH = Symbol('PAYMENTS_WEBHOOKS_PATH');

/** Metadata key under which `@OnPaymentEvent` stores its array of event patterns. */
export const PAYMENT_EVENT_HANDLER_METADATA = 'payments:event_handler';

/**
 * Metadata key set (to `true`) on the webhook controller class and its handler. A host app's global
 * guard reads it (see `isPaymentsWebhookRoute`) to let verified-by-signature deliveries through.
 */
export const PAYMENTS_WEBHOOK_ROUTE_METADATA = 'payments:webhook_route';
