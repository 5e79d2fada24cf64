import { randomUUID } from 'node:crypto';
import { PaymentsConfigurationError } from '../errors/index.js';
import { resolveHmacScheme, signHmacPayload, type HmacVerifierOptions } from '../webhooks/verifiers/hmac.verifier.js';
import { STANDARD_WEBHOOKS_HEADERS, signStandardWebhook } from '../webhooks/verifiers/standard-webhooks.verifier.js';
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

/** Sign as an HMAC sender; the same fields as `hmacVerifier` takes. */
export type HmacSigningOptions = SigningSecret &
  SigningClock &
  Omit<HmacVerifierOptions, 'secrets' | 'now'> & {
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
 * Produces the raw body and headers of a delivery that the built-in verifier, configured with the
 * same options, accepts. An object payload is serialised once (`JSON.stringify`); a string or a
 * Buffer (UTF-8) is signed as it is. Send `rawBody` byte for byte: re-serialising breaks the signature.
 *
 * @example
 * const { rawBody, headers } = signWebhook(createPaymentEvent('payment_intent.succeeded'),
 *   { scheme: 'standard-webhooks', secret: 'whsec_...' });
 * await fetch(url, { method: 'POST', headers, body: rawBody });
 */
export function signWebhook(payload: object | string | Buffer, options: SignWebhookOptions): SignedWebhook {
  const rawBody = Buffer.isBuffer(payload)
    ? payload.toString('utf8')
    : typeof payload === 'string'
      ? payload
      : JSON.stringify(payload);
  const seconds = timestampSeconds(options);
  const base = { 'content-type': 'application/json' };

  if (options.scheme === 'standard-webhooks') {
    const payloadId =
      typeof payload === 'object' && !Buffer.isBuffer(payload) ? (payload as { id?: unknown }).id : undefined;
    const msgId =
      options.msgId ??
      (typeof payloadId === 'string' && payloadId !== '' ? payloadId : `msg_${randomUUID().replace(/-/g, '')}`);
    return {
      rawBody,
      headers: {
        ...base,
        [STANDARD_WEBHOOKS_HEADERS.id]: msgId,
        [STANDARD_WEBHOOKS_HEADERS.timestamp]: String(seconds),
        [STANDARD_WEBHOOKS_HEADERS.signature]: signStandardWebhook(
          firstSecret(options, options.scheme),
          msgId,
          seconds,
          rawBody,
        ),
      },
    };
  }
  if (options.scheme === 'hmac') {
    const scheme = resolveHmacScheme({ ...options, secrets: firstSecret(options, options.scheme) });
    const headers: Record<string, string> = { ...base };
    if (scheme.timestampHeader !== undefined) headers[scheme.timestampHeader] = String(seconds);
    headers[scheme.header] = signHmacPayload(rawBody, scheme, String(seconds));
    return { rawBody, headers };
  }
  const unknown: { scheme?: unknown } = options;
  throw new PaymentsConfigurationError(
    'signWebhook({ scheme })',
    `is not a known scheme (${String(unknown.scheme)})`,
    "pass 'standard-webhooks' or 'hmac'",
  );
}
