import type { WebhookVerifier } from './webhook-verifier.interface.js';

/** When and under which message id `WebhookSignatureScheme.sign` signs. */
export interface WebhookSigningOptions {
  /** Unix seconds to stamp the delivery with. Default: the scheme's clock (`now`), else the system clock. */
  timestamp?: number;
  /** The message id, for schemes that sign one (Standard Webhooks `webhook-id`). Default: a random id. */
  msgId?: string;
}

/**
 * A signature scheme as one object: a name, `verify` (it is a `WebhookVerifier`, so it goes in
 * `webhooks.verifier`) and `sign` (`signWebhook`, a test's deliveries). Built in: `standardWebhooks(...)`,
 * `hmacScheme(...)` and `standardWebhooksEd25519(...)`, which are also `KeyableSignatureScheme`s (they
 * re-key themselves, as the simulator needs); a new scheme is one file that returns this shape
 * (docs/development.md, "Adding a signature scheme"). For an asymmetric scheme the signing secrets are
 * the sender's private keys (they sign, and verify through their public halves).
 *
 * @example
 * const scheme = standardWebhooks({ secrets: process.env.PAYMENTS_WEBHOOK_SECRET! });
 * PaymentsModule.forRoot({ ..., webhooks: { verifier: scheme } });
 * signWebhook(createPaymentEvent('payment_intent.succeeded'), scheme); // in a test
 */
export interface WebhookSignatureScheme extends WebhookVerifier {
  /** A short name for logs and errors, e.g. `'standard-webhooks'`, `'hmac'`. */
  readonly name: string;
  /**
   * The headers that sign `rawBody` (as sent, byte for byte) with the scheme's signing key (the first
   * secret; every private key of an asymmetric scheme, one signature each). Throws a
   * `PaymentsConfigurationError` when the scheme holds no signing key (a receiver's public keys only).
   */
  sign(rawBody: string, options?: WebhookSigningOptions): Record<string, string>;
}
