/**
 * Constants shared by the load generator and every scenario server, so that all of them sign and
 * verify exactly the same scheme. Test values only: nothing here is a real secret.
 */

/** HMAC-SHA256 secret of our scheme (hex digest of the raw body in `SIGNATURE_HEADER`). */
export const BENCH_SECRET = 'bench-endpoint-secret-not-a-real-one';

/** Header carrying the hex HMAC-SHA256 of the raw body. */
export const SIGNATURE_HEADER = 'x-signature';

/** Route every scenario of ours and the baselines answer on. */
export const WEBHOOK_PATH = '/payments/webhooks';

/** Event type of every delivery (a documented name, bound to the no-op handler). */
export const EVENT_TYPE = 'payment_intent.succeeded';

/** webhook_id of every delivery (the endpoint the service would deliver to). */
export const ENDPOINT_ID = '6f1c2a3b-4d5e-4f60-8a71-92b3c4d5e6f7';

/** Size in bytes of every payload (ours and Stripe's). */
export const PAYLOAD_BYTES = 1024;

/** Stripe endpoint secret of the peer scenarios (`whsec_` + base64ish, as Stripe prints them). */
export const STRIPE_SECRET = 'whsec_benchNotARealSecret0123456789abcdef';

/** Route of the peer (golevelup's controller: prefix 'stripe', route '/webhook') and of its bare baseline. */
export const STRIPE_PATH = '/stripe/webhook';

/**
 * Nest log levels of every scenario app: the production usual (Nest's default minus debug and
 * verbose), so that a line our receiver logs per delivery at 'log' level is paid for, as in a real app.
 */
export const BENCH_LOG_LEVELS = ['log', 'warn', 'error', 'fatal'];
