import type { HmacSchemeOptions } from '../webhooks/verifiers/hmac.scheme.js';
import type { VerifierClock } from '../webhooks/verifiers/verifier-clock.js';

/*
 * The options of `signWebhook`, apart from it: the scheme helpers (`signature-schemes.ts`) read them too,
 * and `sign-webhook.ts` imports those helpers (no file circle).
 */

/** The secret to sign with: `secret`, or `secrets` as given to the verifier (the first one signs). */
export type SigningSecret =
  { secret: string; secrets?: never } | { secrets: string | readonly string[]; secret?: never };

export interface SigningClock {
  /** Unix seconds (number) or a Date to stamp the delivery with. Default: `now()`, else the system clock. */
  timestamp?: number | Date;
  /** Clock used when `timestamp` is absent (ms since epoch). */
  now?: VerifierClock;
}

/** Sign as a Standard Webhooks sender: `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
export type StandardWebhooksSigningOptions = SigningSecret &
  SigningClock & {
    scheme: 'standard-webhooks';
    /** `webhook-id`. Default: the payload's `id` when it has one, else a random id. */
    msgId?: string;
    /** Accepted (so verifier options can be spread in) and ignored. */
    toleranceSeconds?: number;
  };

/** Sign as an HMAC sender; the same fields as `hmacScheme` takes. */
export type HmacSigningOptions = SigningSecret &
  SigningClock &
  Omit<HmacSchemeOptions, 'secrets' | 'now'> & {
    scheme: 'hmac';
  };

/** Options of `signWebhook`: the scheme, and the same fields the matching verifier is configured with. */
export type SignWebhookOptions = StandardWebhooksSigningOptions | HmacSigningOptions;
