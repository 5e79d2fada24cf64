import { isWebhookSignatureScheme } from '../webhooks/verifiers/signature-scheme.predicate.js';
import { PaymentsConfigurationError } from '../errors/index.js';
import {
  type WebhookSignatureScheme,
  type WebhookSigningOptions,
} from '../webhooks/contracts/webhook-signature-scheme.interface.js';
import { signatureSchemeOf } from './signature-schemes.js';
import { resolveClock } from '../webhooks/verifiers/verifier-clock.js';
import type { SigningClock, SigningSecret, SignWebhookOptions } from './sign-webhook.options.js';

export type {
  HmacSigningOptions,
  SigningSecret,
  SignWebhookOptions,
  StandardWebhooksSigningOptions,
} from './sign-webhook.options.js';

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
 * own `WebhookSignatureScheme`: `name`, `sign` and `verify` are enough), the delivery that scheme signs. An object payload is serialised once
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
