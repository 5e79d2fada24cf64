import { randomBytes, randomUUID } from 'node:crypto';
import type { WebhookSignatureScheme, WebhookSigningOptions } from '../contracts/webhook-signature-scheme.interface.js';
import {
  signStandardWebhook,
  STANDARD_WEBHOOKS_HEADERS,
  STANDARD_WEBHOOKS_SECRET_PREFIX,
  standardWebhooksVerifier,
  type StandardWebhooksVerifierOptions,
} from './standard-webhooks.verifier.js';
import { resolveClock, type VerifierClock } from './verifier-clock.js';
import { normaliseSecrets } from './verifier-options.util.js';

/**
 * The Standard Webhooks scheme as one object: it verifies exactly as `standardWebhooksVerifier(options)`
 * (same checks, same constant-time comparison) and signs as a Standard Webhooks sender does.
 *
 * @example webhooks: { verifier: standardWebhooks({ secrets: process.env.PAYMENTS_WEBHOOK_SECRET! }) }
 */
export function standardWebhooks(options: StandardWebhooksVerifierOptions): WebhookSignatureScheme {
  const { verify } = standardWebhooksVerifier(options);
  const signingSecret = normaliseSecrets('standardWebhooks({ secrets })', options.secrets)[0]!;
  const now = resolveClock(options.now);
  return Object.freeze({
    name: 'standard-webhooks',
    verify,
    sign(rawBody: string, signing: WebhookSigningOptions = {}): Record<string, string> {
      const msgId = signing.msgId ?? `msg_${randomUUID().replace(/-/g, '')}`;
      const seconds = signing.timestamp ?? Math.floor(now() / 1000);
      return {
        [STANDARD_WEBHOOKS_HEADERS.id]: msgId,
        [STANDARD_WEBHOOKS_HEADERS.timestamp]: String(seconds),
        [STANDARD_WEBHOOKS_HEADERS.signature]: signStandardWebhook(signingSecret, msgId, seconds, rawBody),
      };
    },
    withSecrets: (secrets: string | readonly string[], clock: { now?: VerifierClock } = {}) =>
      standardWebhooks({ ...options, secrets, now: clock.now ?? options.now }),
    newSecret: () => `${STANDARD_WEBHOOKS_SECRET_PREFIX}${randomBytes(24).toString('base64')}`,
  });
}
