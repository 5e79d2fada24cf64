import { createHmac } from 'node:crypto';
import { PaymentsConfigurationError } from '../../errors/index.js';
import { decodeSignature, digestsEqual } from './signature-compare.util.js';
import { resolveClock, type VerifierClock } from './verifier-clock.js';
import { normaliseSecrets } from './verifier-options.util.js';
import { headerValues } from './webhook-headers.util.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, isValidTolerance } from './webhook-timestamp.util.js';
import type {
  WebhookVerificationInput,
  WebhookVerificationResult,
  WebhookVerifier,
} from '../contracts/webhook-verifier.interface.js';

/** Options of `standardWebhooksVerifier`. */
export interface StandardWebhooksVerifierOptions {
  /** `whsec_`-prefixed base64 secret (the prefix may be omitted), or several while rotating. */
  secrets: string | readonly string[];
  /** Allowed distance, in seconds, between `webhook-timestamp` and now, both ways. Default 300. */
  toleranceSeconds?: number;
  /** Clock (ms since epoch); a `PaymentsRuntime` fits. Default `Date.now`. */
  now?: VerifierClock;
}

/** Header names of the Standard Webhooks scheme. */
export const STANDARD_WEBHOOKS_HEADERS = Object.freeze({
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
});

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
function standardDigest(key: Buffer, msgId: string, timestamp: string, rawBody: Buffer): Buffer {
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
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return `v1,${standardDigest(key, msgId, String(timestampSeconds), body).toString('base64')}`;
}

/**
 * A verifier for the public Standard Webhooks scheme: headers `webhook-id`, `webhook-timestamp`
 * (unix seconds, within `toleranceSeconds` both ways) and `webhook-signature` (space-separated
 * `v1,<base64>` entries; other versions and junk are ignored; any match wins). Constant-time
 * comparison; options are checked here, at boot.
 *
 * @example standardWebhooksVerifier({ secrets: [process.env.WEBHOOK_SECRET!, process.env.WEBHOOK_SECRET_OLD!] })
 */
export function standardWebhooksVerifier(options: StandardWebhooksVerifierOptions): WebhookVerifier {
  const o = (options ?? {}) as Partial<StandardWebhooksVerifierOptions>;
  const list = normaliseSecrets('standardWebhooksVerifier({ secrets })', o.secrets);
  const keys = list.map((secret, index) =>
    decodeStandardWebhooksSecret(
      Array.isArray(o.secrets)
        ? `standardWebhooksVerifier({ secrets })[${index}]`
        : 'standardWebhooksVerifier({ secrets })',
      secret,
    ),
  );
  const toleranceSeconds = o.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!isValidTolerance(toleranceSeconds)) {
    throw new PaymentsConfigurationError(
      'standardWebhooksVerifier({ toleranceSeconds })',
      'is negative or not a number',
      'pass a number of seconds >= 0 (default 300)',
    );
  }
  const now = resolveClock(o.now);

  return {
    verify(input: WebhookVerificationInput): WebhookVerificationResult {
      const ids = headerValues(input.headers, STANDARD_WEBHOOKS_HEADERS.id);
      const stamps = headerValues(input.headers, STANDARD_WEBHOOKS_HEADERS.timestamp);
      const signatureHeaders = headerValues(input.headers, STANDARD_WEBHOOKS_HEADERS.signature);
      if (ids.length === 0) return { valid: false, reason: 'missing_id' };
      if (stamps.length === 0) return { valid: false, reason: 'missing_timestamp' };
      if (signatureHeaders.length === 0) return { valid: false, reason: 'missing_signature' };
      if (ids.length > 1) return { valid: false, reason: 'malformed_id' };
      if (stamps.length > 1) return { valid: false, reason: 'malformed_timestamp' };

      const checked = checkTimestamp(stamps[0]!, now(), toleranceSeconds);
      if (!checked.ok) return { valid: false, reason: checked.reason };

      const signatures: Buffer[] = [];
      for (const entry of signatureHeaders.join(' ').split(' ')) {
        const comma = entry.indexOf(',');
        if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
        const decoded = decodeSignature(entry.slice(comma + 1), 'base64');
        if (decoded !== undefined && decoded.length > 0) signatures.push(decoded);
      }
      if (signatures.length === 0) return { valid: false, reason: 'malformed_signature' };

      for (const key of keys) {
        // The integer, as the reference libraries sign it (they parse the header first).
        const expected = standardDigest(key, ids[0]!, String(checked.seconds), input.rawBody);
        if (signatures.some((signature) => digestsEqual(expected, signature))) return { valid: true };
      }
      return { valid: false, reason: 'signature_mismatch' };
    },
  };
}
