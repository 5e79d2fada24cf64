import { PaymentsConfigurationError } from '../errors/index.js';
import {
  isWebhookSignatureScheme,
  type WebhookSignatureScheme,
  type WebhookSigningOptions,
} from '../webhooks/contracts/webhook-signature-scheme.interface.js';
import type { HmacSchemeOptions } from '../webhooks/verifiers/hmac.scheme.js';
import { signatureSchemeOf } from './signature-schemes.js';
import { resolveClock, type VerifierClock } from '../webhooks/verifiers/verifier-clock.js';

/** The secret to sign with: `secret`, or `secrets` as given to the verifier (the first one signs). */
export type SigningSecret =
  { secret: string; secrets?: never } | { secrets: string | readonly string[]; secret?: never };

interface SigningClock {
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

/** A delivery ready to send: the exact body and the headers that sign it (with `content-type`). */
export interface SignedWebhook {
  rawBody: string;
  headers: Record<string, string>;
}

function firstSecret(options: SigningSecret, scheme: string): string {
  const secret = options.secret ?? (Array.isArray(options.secrets) ? options.secrets[0] : options.secrets);
  if (typeof secret !== 'string' || secret === '') {
    throw new PaymentsConfigurationError(
      `signWebhook({ scheme: '${scheme}', secret })`,
      'is missing or empty',
      'pass the same secret the verifier is configured with',
    );
  }
  return secret;
}

function timestampSeconds(options: SigningClock): number {
  const { timestamp } = options;
  if (timestamp instanceof Date) return Math.floor(timestamp.getTime() / 1000);
  if (typeof timestamp === 'number') return Math.floor(timestamp);
  return Math.floor(resolveClock(options.now)() / 1000);
}

/**
 * Produces the raw body and headers of a delivery that the built-in scheme, configured with the
 * same options, accepts; or, given a scheme object (`standardWebhooks(...)`, `hmacScheme(...)`, your
 * own `WebhookSignatureScheme`), the delivery that scheme signs. An object payload is serialised once
 * (`JSON.stringify`); a string or a Buffer (UTF-8) is signed as it is. Send `rawBody` byte for byte:
 * re-serialising breaks the signature.
 *
 * @example
 * const { rawBody, headers } = signWebhook(createPaymentEvent('payment_intent.succeeded'),
 *   { scheme: 'standard-webhooks', secret: 'whsec_...' });
 * signWebhook(event, standardWebhooks({ secrets: 'whsec_...' }), { timestamp: 1767225600 });
 * await fetch(url, { method: 'POST', headers, body: rawBody });
 */
export function signWebhook(
  payload: object | string | Buffer,
  options: SignWebhookOptions | WebhookSignatureScheme,
  signing: WebhookSigningOptions = {},
): SignedWebhook {
  const rawBody = Buffer.isBuffer(payload)
    ? payload.toString('utf8')
    : typeof payload === 'string'
      ? payload
      : JSON.stringify(payload);
  const payloadId =
    typeof payload === 'object' && !Buffer.isBuffer(payload) ? (payload as { id?: unknown }).id : undefined;
  // The message id (Standard Webhooks): the payload's own id when it has one.
  const msgId = signing.msgId ?? (typeof payloadId === 'string' && payloadId !== '' ? payloadId : undefined);
  if (isWebhookSignatureScheme(options)) {
    const headers = options.sign(rawBody, { ...signing, ...(msgId === undefined ? {} : { msgId }) });
    return { rawBody, headers: { 'content-type': 'application/json', ...headers } };
  }
  // The older form, options that describe the scheme: made into the scheme object, keyed with the secret.
  const scheme = signatureSchemeOf(options, 'signWebhook({ scheme })', {
    secret: firstSecret(options, String(options.scheme)),
    now: options.now,
  });
  const given = (options as { msgId?: string }).msgId;
  return signWebhook(payload, scheme, {
    timestamp: timestampSeconds(options),
    ...(given === undefined ? {} : { msgId: given }),
  });
}
