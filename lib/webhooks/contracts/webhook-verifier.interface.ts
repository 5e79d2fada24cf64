/** What a verifier sees of a delivery: the raw bytes, exactly as received, and the headers. */
export interface WebhookVerificationInput {
  rawBody: Buffer;
  /** Lower-cased header names, as Node gives them. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** `reason` is logged (never a header value or secret) and never sent to the client. */
export type WebhookVerificationResult = { valid: true } | { valid: false; reason: string };

/**
 * What the receiver needs of a signature scheme: `verify`. The reference does not show the service's
 * scheme, so none is assumed: pass a scheme object (`standardWebhooks(...)`, `hmacScheme(...)`,
 * `standardWebhooksEd25519(...)`, which also sign) or your own implementation.
 */
export interface WebhookVerifier {
  verify(input: WebhookVerificationInput): WebhookVerificationResult | Promise<WebhookVerificationResult>;
}
