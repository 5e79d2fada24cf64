import { createHmac, randomBytes } from 'node:crypto';
import { PaymentsConfigurationError } from '../../errors/index.js';
import type { KeyableSignatureScheme } from '../contracts/keyable-signature-scheme.interface.js';
import type { WebhookSigningOptions } from '../contracts/webhook-signature-scheme.interface.js';
import type {
  WebhookVerificationInput,
  WebhookVerificationResult,
  WebhookVerifier,
} from '../contracts/webhook-verifier.interface.js';
import { digestsEqual } from './signature-compare.util.js';
import {
  newStandardWebhookMsgId,
  readStandardWebhookHeaders,
  STANDARD_WEBHOOKS_HEADERS,
  standardWebhooksTolerance,
} from './standard-webhooks.protocol.js';
import { resolveClock, type VerifierClock } from './verifier-clock.js';
import { normaliseSecrets } from './verifier-options.util.js';

/** Options of `standardWebhooks`. */
export interface StandardWebhooksOptions {
  /** `whsec_`-prefixed base64 secret (the prefix may be omitted), or several while rotating. */
  secrets: string | readonly string[];
  /** Allowed distance, in seconds, between `webhook-timestamp` and now, both ways. Default 300. */
  toleranceSeconds?: number;
  /** Clock (ms since epoch); a `PaymentsRuntime` fits. Default `Date.now`. */
  now?: VerifierClock;
}

/** @deprecated Use `StandardWebhooksOptions` (the same type under the scheme's name). */
export type StandardWebhooksVerifierOptions = StandardWebhooksOptions;

/** Prefix of Standard Webhooks secrets. */
export const STANDARD_WEBHOOKS_SECRET_PREFIX = 'whsec_';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Decodes a Standard Webhooks secret (`whsec_` + base64, or the base64 alone, as the reference
 * libraries accept) into key bytes. Throws a `PaymentsConfigurationError` naming `option`; the
 * message never contains the secret.
 */
export function decodeStandardWebhooksSecret(option: string, secret: string): Buffer {
  const encoded = secret.startsWith(STANDARD_WEBHOOKS_SECRET_PREFIX)
    ? secret.slice(STANDARD_WEBHOOKS_SECRET_PREFIX.length)
    : secret;
  if (encoded === '') {
    throw new PaymentsConfigurationError(
      option,
      "is empty after the 'whsec_' prefix",
      'pass the whole endpoint secret, whsec_ followed by its base64 key',
    );
  }
  if (!BASE64.test(encoded) || encoded.length % 4 === 1) {
    throw new PaymentsConfigurationError(
      option,
      'is not base64 after the optional whsec_ prefix',
      'pass the endpoint secret exactly as the service gave it (whsec_ followed by base64)',
    );
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) {
    throw new PaymentsConfigurationError(option, 'decodes to an empty key', 'pass the whole endpoint secret');
  }
  return key;
}

/** The one signature computation of the scheme: HMAC-SHA256 over `${id}.${timestamp}.${rawBody}`. */
function standardDigest(key: Buffer, msgId: string, timestamp: string, rawBody: Buffer | string): Buffer {
  // Fed in two parts: the bytes of standardWebhookContent, without copying the body.
  return createHmac('sha256', key).update(`${msgId}.${timestamp}.`).update(rawBody).digest();
}

/**
 * The `webhook-signature` value (`v1,<base64>`) a Standard Webhooks sender would send. `secret` is
 * `whsec_...` (or bare base64). For the testing kit and the simulator.
 */
export function signStandardWebhook(
  secret: string,
  msgId: string,
  timestampSeconds: number | string,
  rawBody: Buffer | string,
): string {
  const key = decodeStandardWebhooksSecret('secret', secret);
  return `v1,${standardDigest(key, msgId, String(timestampSeconds), rawBody).toString('base64')}`;
}

function createStandardWebhooks(options: StandardWebhooksOptions, called: string): KeyableSignatureScheme {
  const o = (options ?? {}) as Partial<StandardWebhooksOptions>;
  const list = normaliseSecrets(`${called}({ secrets })`, o.secrets);
  const keys = list.map((secret, index) =>
    decodeStandardWebhooksSecret(
      Array.isArray(o.secrets) ? `${called}({ secrets })[${index}]` : `${called}({ secrets })`,
      secret,
    ),
  );
  const toleranceSeconds = standardWebhooksTolerance(`${called}({ toleranceSeconds })`, o.toleranceSeconds);
  const now = resolveClock(o.now);

  return Object.freeze({
    name: 'standard-webhooks',
    verify(input: WebhookVerificationInput): WebhookVerificationResult {
      const read = readStandardWebhookHeaders(input, 'v1', now(), toleranceSeconds);
      if (!read.ok) return { valid: false, reason: read.reason };
      for (const key of keys) {
        // The integer, as the reference libraries sign it (they parse the header first).
        const expected = standardDigest(key, read.msgId, String(read.seconds), input.rawBody);
        if (read.signatures.some((signature) => digestsEqual(expected, signature))) return { valid: true };
      }
      return { valid: false, reason: 'signature_mismatch' };
    },
    // Signs as a Standard Webhooks sender does, with the first secret.
    sign(rawBody: string, signing: WebhookSigningOptions = {}): Record<string, string> {
      const msgId = signing.msgId ?? newStandardWebhookMsgId();
      const seconds = String(signing.timestamp ?? Math.floor(now() / 1000));
      return {
        [STANDARD_WEBHOOKS_HEADERS.id]: msgId,
        [STANDARD_WEBHOOKS_HEADERS.timestamp]: seconds,
        [STANDARD_WEBHOOKS_HEADERS.signature]: `v1,${standardDigest(keys[0]!, msgId, seconds, rawBody).toString('base64')}`,
      };
    },
    withSecrets: (secrets: string | readonly string[], clock: { now?: VerifierClock } = {}) =>
      createStandardWebhooks({ ...o, secrets, now: clock.now ?? o.now }, called),
    newSecret: () => `${STANDARD_WEBHOOKS_SECRET_PREFIX}${randomBytes(24).toString('base64')}`,
  });
}

/**
 * The public Standard Webhooks scheme (symmetric, `v1`) as one object that verifies and signs, like the
 * Standard Webhooks library's `Webhook`: headers `webhook-id`, `webhook-timestamp` (unix seconds, within
 * `toleranceSeconds` both ways) and `webhook-signature` (space-separated `v1,<base64>` entries, at most
 * 8; other versions and junk are ignored; any match wins). Constant-time comparison; options are checked
 * here, at boot; signing uses the first secret.
 *
 * @example webhooks: { verifier: standardWebhooks({ secrets: [process.env.WEBHOOK_SECRET!, process.env.WEBHOOK_SECRET_OLD!] }) }
 */
export function standardWebhooks(options: StandardWebhooksOptions): KeyableSignatureScheme {
  return createStandardWebhooks(options, 'standardWebhooks');
}

/**
 * The Standard Webhooks scheme under its former name: the same object as `standardWebhooks(options)`,
 * its option errors named `standardWebhooksVerifier({ ... })` as before.
 *
 * @deprecated Use `standardWebhooks(options)`: the same options, the same object, one name for verifying and signing.
 */
export function standardWebhooksVerifier(options: StandardWebhooksOptions): WebhookVerifier {
  return createStandardWebhooks(options, 'standardWebhooksVerifier');
}
