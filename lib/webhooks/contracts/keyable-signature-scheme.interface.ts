import type { PaymentsClock } from '../../core/payments.clock.js';
import type { WebhookSignatureScheme } from './webhook-signature-scheme.interface.js';

/**
 * A `WebhookSignatureScheme` that can also be keyed again: `withSecrets` gives the same scheme with other
 * keys, `newSecret` makes a key of the scheme's own form. The simulator (`PaymentsSimulator({ signature
 * })`, the CLI) needs both, to give each endpoint a secret of its own; the receiver and `signWebhook` do
 * not. The built-in schemes (`standardWebhooks(...)`, `hmacScheme(...)`, `standardWebhooksEd25519(...)`)
 * are keyable; a scheme of your own needs these two members only to sign the simulator's deliveries.
 *
 * @example
 * const scheme: KeyableSignatureScheme = standardWebhooks({ secrets: 'whsec_...' });
 * const endpoint = scheme.withSecrets(scheme.newSecret()); // another endpoint's key, same scheme
 * new PaymentsSimulator({ signature: scheme });
 */
export interface KeyableSignatureScheme extends WebhookSignatureScheme {
  /** The same scheme keyed with `secrets` (and, when given, another clock). */
  withSecrets(secrets: string | readonly string[], options?: { now?: PaymentsClock }): KeyableSignatureScheme;
  /** A fresh random secret in the form this scheme's secrets take. */
  newSecret(): string;
}
