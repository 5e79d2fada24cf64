import type { KeyableSignatureScheme } from '../contracts/keyable-signature-scheme.interface.js';
import type { WebhookVerifier } from '../contracts/webhook-verifier.interface.js';

/**
 * The header names a scheme object signs with (lower-cased), learnt by signing an empty body with a
 * fresh key of its own form, so no scheme has to list them: `['webhook-id', 'webhook-timestamp',
 * 'webhook-signature']` for Standard Webhooks, the signature (and timestamp) header of an HMAC scheme.
 * Undefined for a verifier that does not sign (a plain `WebhookVerifier`), one that cannot, or a scheme
 * that cannot be keyed afresh (no `withSecrets` and `newSecret`, as a `KeyableSignatureScheme` has).
 */
export function signatureHeadersOf(verifier: WebhookVerifier): readonly string[] | undefined {
  const scheme = verifier as Partial<KeyableSignatureScheme>;
  if (typeof scheme.withSecrets !== 'function' || typeof scheme.newSecret !== 'function') return undefined;
  try {
    const signer = scheme.withSecrets(scheme.newSecret());
    return Object.freeze(Object.keys(signer.sign('{}')).map((name) => name.toLowerCase()));
  } catch {
    return undefined;
  }
}
