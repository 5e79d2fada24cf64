import type { WebhookSignatureScheme } from '../contracts/webhook-signature-scheme.interface.js';

/** Whether `value` is a `WebhookSignatureScheme` (rather than the options of one). */
export function isWebhookSignatureScheme(value: unknown): value is WebhookSignatureScheme {
  const candidate = value as Partial<WebhookSignatureScheme> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.sign === 'function' &&
    typeof candidate.verify === 'function' &&
    typeof candidate.withSecrets === 'function'
  );
}
