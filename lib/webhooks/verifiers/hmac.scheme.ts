import { randomBytes } from 'node:crypto';
import type { WebhookSignatureScheme, WebhookSigningOptions } from '../contracts/webhook-signature-scheme.interface.js';
import { hmacVerifier, resolveHmacScheme, signHmacPayload, type HmacVerifierOptions } from './hmac.verifier.js';
import { resolveClock, type VerifierClock } from './verifier-clock.js';

/**
 * An HMAC scheme the merchant was given, as one object: it verifies exactly as `hmacVerifier(options)`
 * (same checks, same constant-time comparison) and signs as its sender does (first secret).
 *
 * @example webhooks: { verifier: hmacScheme({ secrets: process.env.WEBHOOK_SECRET!, header: 'x-signature' }) }
 */
export function hmacScheme(options: HmacVerifierOptions): WebhookSignatureScheme {
  const { verify } = hmacVerifier(options);
  const scheme = resolveHmacScheme(options);
  const now = resolveClock(options.now);
  return Object.freeze({
    name: 'hmac',
    verify,
    sign(rawBody: string, signing: WebhookSigningOptions = {}): Record<string, string> {
      const seconds = String(signing.timestamp ?? Math.floor(now() / 1000));
      const headers: Record<string, string> = {};
      if (scheme.timestampHeader !== undefined) headers[scheme.timestampHeader] = seconds;
      headers[scheme.header] = signHmacPayload(rawBody, scheme, seconds);
      return headers;
    },
    withSecrets: (secrets: string | readonly string[], clock: { now?: VerifierClock } = {}) =>
      hmacScheme({ ...options, secrets, now: clock.now ?? options.now }),
    // 32 random bytes, hex: the form of the secrets the simulator hands out for this scheme.
    newSecret: () => randomBytes(32).toString('hex'),
  });
}
