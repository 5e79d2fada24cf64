import type { KeyableSignatureScheme } from '../contracts/keyable-signature-scheme.interface.js';
import type { WebhookSignatureScheme } from '../contracts/webhook-signature-scheme.interface.js';

/**
 * Whether `value` is a `WebhookSignatureScheme` (rather than the options of one): an object that signs
 * and verifies. A scheme of the user's own needs no more than that (its `name` is not checked here).
 */
export function isWebhookSignatureScheme(value: unknown): value is WebhookSignatureScheme {
  const candidate = value as Partial<WebhookSignatureScheme> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.sign === 'function' &&
    typeof candidate.verify === 'function'
  );
}

/** Whether `value` is a `KeyableSignatureScheme`: a scheme that also re-keys itself and makes secrets. */
export function isKeyableSignatureScheme(value: unknown): value is KeyableSignatureScheme {
  const candidate = value as Partial<KeyableSignatureScheme> | null;
  return (
    isWebhookSignatureScheme(value) &&
    typeof candidate?.withSecrets === 'function' &&
    typeof candidate.newSecret === 'function'
  );
}
