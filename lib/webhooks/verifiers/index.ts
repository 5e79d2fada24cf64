export * from '../contracts/webhook-verifier.interface.js';
export type { WebhookSignatureScheme, WebhookSigningOptions } from '../contracts/webhook-signature-scheme.interface.js';
export type { KeyableSignatureScheme } from '../contracts/keyable-signature-scheme.interface.js';
export type { SignatureEncoding } from './signature-compare.util.js';
export { hmacScheme, hmacVerifier } from './hmac.scheme.js';
export type { HmacSchemeOptions, HmacVerifierOptions, HmacAlgorithm, HmacSignedPayload } from './hmac.scheme.js';
export { standardWebhooks, standardWebhooksVerifier } from './standard-webhooks.scheme.js';
export type { StandardWebhooksOptions, StandardWebhooksVerifierOptions } from './standard-webhooks.scheme.js';
export { standardWebhooksEd25519, type StandardWebhooksEd25519Options } from './standard-webhooks-ed25519.scheme.js';
