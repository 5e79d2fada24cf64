/** Tokens and metadata keys of the webhook receiver. */

/** Token of the static webhook route path chosen when the module was defined. */
export const PAYMENTS_WEBHOOKS_PATH = Symbol('PAYMENTS_WEBHOOKS_PATH');

/** Metadata key under which `@OnPaymentEvent` stores its array of event patterns. */
export const PAYMENT_EVENT_HANDLER_METADATA = 'payments:event_handler';

/** Metadata key under which `@OnPaymentEvent` stores its merged `OnPaymentEventOptions`. */
export const PAYMENT_EVENT_HANDLER_OPTIONS_METADATA = 'payments:event_handler_options';

/**
 * Metadata key set (to `true`) on the webhook controller class and its handler. A host app's global
 * guard reads it (see `isPaymentsWebhookRoute`) to let verified-by-signature deliveries through.
 */
export const PAYMENTS_WEBHOOK_ROUTE_METADATA = 'payments:webhook_route';

/**
 * Token of the receiver's validated options (`ResolvedWebhooksOptions`; `false` only when a
 * `forRootAsync` route exists but the factory turned webhooks off). Internal to one instance: never
 * exported, and it holds no API key.
 */
export const PAYMENTS_WEBHOOKS_OPTIONS = Symbol('PAYMENTS_WEBHOOKS_OPTIONS');

/**
 * Token of the `PaymentEventsRegistry` inside one instance (the explorer, the dispatcher and the
 * inbox inject it). The class token names only the unnamed instance's registry, even for `app.get`;
 * a named instance exports its own under `getPaymentEventsRegistryToken(name)`.
 */
export const PAYMENT_EVENTS_REGISTRY = Symbol('PAYMENT_EVENTS_REGISTRY');

/** Token of the dispatcher of one instance (`PaymentEventsDispatch`), for the queue worker. */
export const PAYMENT_EVENTS_DISPATCHER = Symbol('PAYMENT_EVENTS_DISPATCHER');
