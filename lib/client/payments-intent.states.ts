/**
 * The intent states the service signals by event, written once: the client's state types, the
 * webhook event names and the testing kit (simulator outcomes, checkout page) all derive from these.
 */

/** The nine payment-intent states, in the order the service documents them. */
export const PAYMENT_INTENT_STATES = Object.freeze([
  'succeeded',
  'cancelled',
  'errored_authorization',
  'errored_capture',
  'errored_sale',
  'requires_payment_method',
  'requires_confirmation',
  'requires_capture',
  'requires_review',
] as const);

/** The four setup-intent states. */
export const SETUP_INTENT_STATES = Object.freeze(['succeeded', 'failed', 'errored', 'cancelled'] as const);
