export * from '../contracts/webhook-verifier.interface.js';
export type { SignatureEncoding } from './signature-compare.util.js';
export { hmacVerifier } from './hmac.verifier.js';
export type { HmacVerifierOptions, HmacAlgorithm, HmacSignedPayload } from './hmac.verifier.js';
export { standardWebhooksVerifier } from './standard-webhooks.verifier.js';
export type { StandardWebhooksVerifierOptions } from './standard-webhooks.verifier.js';
export { standardWebhooks } from './standard-webhooks.scheme.js';
export { hmacScheme } from './hmac.scheme.js';
export type { WebhookSignatureScheme, WebhookSigningOptions } from '../contracts/webhook-signature-scheme.interface.js';
