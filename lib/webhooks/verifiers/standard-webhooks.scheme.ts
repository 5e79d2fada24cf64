import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { PaymentsConfigurationError } from '../../errors/index.js';
import type { WebhookSignatureScheme, WebhookSigningOptions } from '../contracts/webhook-signature-scheme.interface.js';
import type {
  WebhookVerificationInput,
  WebhookVerificationResult,
  WebhookVerifier,
} from '../contracts/webhook-verifier.interface.js';
import { decodeSignature, digestsEqual, MAX_SIGNATURE_ENTRIES } from './signature-compare.util.js';
import { resolveClock, type VerifierClock } from './verifier-clock.js';
import { normaliseSecrets } from './verifier-options.util.js';
import { headerValues } from './webhook-headers.util.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, isValidTolerance } from './webhook-timestamp.util.js';

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

/** A Standard Webhooks delivery as a verifier reads it: headers present, timestamp within tolerance. */
export type StandardWebhookHeaders =
  { ok: true; msgId: string; seconds: number; signatures: Buffer[] } | { ok: false; reason: string };

/**
 * Reads `webhook-id`, `webhook-timestamp` (within `toleranceSeconds` of `nowMs`, both ways) and the
 * `webhook-signature` entries of one version (`v1` symmetric, `v1a` asymmetric; other versions and junk
 * are skipped, as the spec's rotation header mixes them). More than `MAX_SIGNATURE_ENTRIES` entries of
 * the version: `too_many_signatures`, none checked. Shared by every Standard Webhooks scheme.
 */
export function readStandardWebhookHeaders(
  input: WebhookVerificationInput,
  version: string,
  nowMs: number,
  toleranceSeconds: number,
): StandardWebhookHeaders {
  const ids = headerValues(input.headers, STANDARD_WEBHOOKS_HEADERS.id);
  const stamps = headerValues(input.headers, STANDARD_WEBHOOKS_HEADERS.timestamp);
  const signatureHeaders = headerValues(input.headers, STANDARD_WEBHOOKS_HEADERS.signature);
  if (ids.length === 0) return { ok: false, reason: 'missing_id' };
  if (stamps.length === 0) return { ok: false, reason: 'missing_timestamp' };
  if (signatureHeaders.length === 0) return { ok: false, reason: 'missing_signature' };
  if (ids.length > 1) return { ok: false, reason: 'malformed_id' };
  if (stamps.length > 1) return { ok: false, reason: 'malformed_timestamp' };

  const checked = checkTimestamp(stamps[0]!, nowMs, toleranceSeconds);
  if (!checked.ok) return { ok: false, reason: checked.reason };

  const entries: string[] = [];
  for (const entry of signatureHeaders.join(' ').split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== version) continue;
    // Counted before any is decoded or checked: a long list is refused at the cost of reading it.
    if (entries.length === MAX_SIGNATURE_ENTRIES) return { ok: false, reason: 'too_many_signatures' };
    entries.push(entry.slice(comma + 1));
  }
  const signatures: Buffer[] = [];
  for (const entry of entries) {
    const decoded = decodeSignature(entry, 'base64');
    if (decoded !== undefined && decoded.length > 0) signatures.push(decoded);
  }
  if (signatures.length === 0) return { ok: false, reason: 'malformed_signature' };
  return { ok: true, msgId: ids[0]!, seconds: checked.seconds, signatures };
}

/** The bytes every Standard Webhooks signature covers: `${id}.${timestamp}.${rawBody}`. */
export function standardWebhookContent(msgId: string, seconds: number | string, rawBody: Buffer | string): Buffer {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return Buffer.concat([Buffer.from(`${msgId}.${seconds}.`, 'utf8'), body]);
}

/** A fresh message id in the form the reference libraries use (`msg_` + 32 hex digits). */
export const newStandardWebhookMsgId = (): string => `msg_${randomUUID().replace(/-/g, '')}`;

/** Checks a `toleranceSeconds` option (default 300), naming it in the error. */
export function standardWebhooksTolerance(option: string, value: unknown): number {
  const toleranceSeconds = value ?? DEFAULT_TOLERANCE_SECONDS;
  if (!isValidTolerance(toleranceSeconds)) {
    throw new PaymentsConfigurationError(
      option,
      'is negative or not a number',
      'pass a number of seconds >= 0 (default 300)',
    );
  }
  return toleranceSeconds;
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

function createStandardWebhooks(options: StandardWebhooksOptions, called: string): WebhookSignatureScheme {
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
export function standardWebhooks(options: StandardWebhooksOptions): WebhookSignatureScheme {
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
