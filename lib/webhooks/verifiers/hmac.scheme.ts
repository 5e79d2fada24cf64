import { createHmac, randomBytes } from 'node:crypto';
import { PaymentsConfigurationError } from '../../errors/index.js';
import type { KeyableSignatureScheme } from '../contracts/keyable-signature-scheme.interface.js';
import type { WebhookSigningOptions } from '../contracts/webhook-signature-scheme.interface.js';
import type {
  WebhookVerificationInput,
  WebhookVerificationResult,
  WebhookVerifier,
} from '../contracts/webhook-verifier.interface.js';
import {
  decodeSignature,
  digestsEqual,
  MAX_SIGNATURE_ENTRIES,
  type SignatureEncoding,
} from './signature-compare.util.js';
import { resolveClock, type VerifierClock } from './verifier-clock.js';
import { normaliseSecrets } from './verifier-options.util.js';
import { headerValues } from './webhook-headers.util.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, isValidTolerance } from './webhook-timestamp.util.js';

/** Digest algorithms `hmacScheme` supports. */
export type HmacAlgorithm = 'sha256' | 'sha512';

/** What an HMAC scheme signs: the raw body, or `${timestamp}.${rawBody}`. */
export type HmacSignedPayload = 'body' | 'timestamp.body';

/** Options of `hmacScheme`: the HMAC scheme the service gave the merchant, described field by field. */
export interface HmacSchemeOptions {
  /** The endpoint secret (used as UTF-8 key bytes), or several while rotating: any one may match. */
  secrets: string | readonly string[];
  /** Header carrying the signature, e.g. `'x-signature'` (case-insensitive). */
  header: string;
  /** Default `'sha256'`. */
  algorithm?: HmacAlgorithm;
  /** How the digest is written in the header. Default `'hex'`. */
  encoding?: SignatureEncoding;
  /** Text before the digest that must be present, e.g. `'sha256='`. Default none. */
  prefix?: string;
  /** Header carrying the unix-seconds timestamp of the delivery. Default none (no replay window). */
  timestampHeader?: string;
  /** Allowed distance, in seconds, between the timestamp and now, both ways. Default 300. */
  toleranceSeconds?: number;
  /** Default `'body'`. `'timestamp.body'` (needs `timestampHeader`) signs `${timestamp}.${rawBody}`. */
  signedPayload?: HmacSignedPayload;
  /** Clock (ms since epoch) for the timestamp check; a `PaymentsRuntime` fits. Default `Date.now`. */
  now?: VerifierClock;
}

/** @deprecated Use `HmacSchemeOptions` (the same type under the scheme's name). */
export type HmacVerifierOptions = HmacSchemeOptions;

const ALGORITHMS: readonly HmacAlgorithm[] = ['sha256', 'sha512'];
const ENCODINGS: readonly SignatureEncoding[] = ['hex', 'base64'];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The validated options. */
interface ResolvedHmac {
  secrets: string[];
  header: string;
  algorithm: HmacAlgorithm;
  encoding: SignatureEncoding;
  prefix: string;
  timestampHeader: string | undefined;
  toleranceSeconds: number;
  signedPayload: HmacSignedPayload;
}

/**
 * Validates the options, throwing a `PaymentsConfigurationError` that names the option (under the name
 * the caller used, `hmacScheme` or the deprecated `hmacVerifier`) and the fix; never a secret.
 */
function resolveHmac(options: HmacSchemeOptions, called: string): ResolvedHmac {
  const o = (options ?? {}) as Partial<HmacSchemeOptions>;
  const option = (name: string): string => `${called}({ ${name} })`;
  const secrets = normaliseSecrets(option('secrets'), o.secrets);
  if (typeof o.header !== 'string' || !HEADER_NAME.test(o.header)) {
    throw new PaymentsConfigurationError(
      option('header'),
      'is missing or not a valid header name',
      "pass the name of the header that carries the signature, e.g. 'x-signature'",
    );
  }
  const algorithm = o.algorithm ?? 'sha256';
  if (!ALGORITHMS.includes(algorithm)) {
    throw new PaymentsConfigurationError(
      option('algorithm'),
      `is not one of ${ALGORITHMS.join(', ')}`,
      "pass 'sha256' (the default) or 'sha512'",
    );
  }
  const encoding = o.encoding ?? 'hex';
  if (!ENCODINGS.includes(encoding)) {
    throw new PaymentsConfigurationError(
      option('encoding'),
      `is not one of ${ENCODINGS.join(', ')}`,
      "pass 'hex' (the default) or 'base64'",
    );
  }
  if (o.prefix !== undefined && typeof o.prefix !== 'string') {
    throw new PaymentsConfigurationError(
      option('prefix'),
      'is not a string',
      "pass the text before the digest, e.g. 'sha256=', or leave it out",
    );
  }
  if (
    o.timestampHeader !== undefined &&
    (typeof o.timestampHeader !== 'string' || !HEADER_NAME.test(o.timestampHeader))
  ) {
    throw new PaymentsConfigurationError(
      option('timestampHeader'),
      'is not a valid header name',
      "pass the name of the header carrying the unix timestamp, e.g. 'x-timestamp', or leave it out",
    );
  }
  const toleranceSeconds = o.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!isValidTolerance(toleranceSeconds)) {
    throw new PaymentsConfigurationError(
      option('toleranceSeconds'),
      'is negative or not a number',
      'pass a number of seconds >= 0 (default 300)',
    );
  }
  const signedPayload = o.signedPayload ?? 'body';
  if (signedPayload !== 'body' && signedPayload !== 'timestamp.body') {
    throw new PaymentsConfigurationError(
      option('signedPayload'),
      "is not 'body' or 'timestamp.body'",
      "pass 'body' (the default) or 'timestamp.body'",
    );
  }
  if (signedPayload === 'timestamp.body' && o.timestampHeader === undefined) {
    throw new PaymentsConfigurationError(
      option('signedPayload'),
      "is 'timestamp.body' but no timestampHeader is set",
      "also pass `timestampHeader` (the header carrying the timestamp), or use signedPayload 'body'",
    );
  }
  return {
    secrets,
    header: o.header.toLowerCase(),
    algorithm,
    encoding,
    prefix: o.prefix ?? '',
    timestampHeader: o.timestampHeader?.toLowerCase(),
    toleranceSeconds,
    signedPayload,
  };
}

/** The one HMAC computation of this scheme, used to verify and to sign. */
function hmacDigest(secret: string, scheme: ResolvedHmac, rawBody: Buffer, timestamp: string | undefined): Buffer {
  const mac = createHmac(scheme.algorithm, secret);
  if (scheme.signedPayload === 'timestamp.body') mac.update(`${timestamp}.`);
  mac.update(rawBody);
  return mac.digest();
}

function verifyHmac(
  scheme: ResolvedHmac,
  now: () => number,
  input: WebhookVerificationInput,
): WebhookVerificationResult {
  const given = headerValues(input.headers, scheme.header);
  if (given.length === 0) return { valid: false, reason: 'missing_signature' };
  // Several values (one per rotated secret) are accepted, a handful only: see MAX_SIGNATURE_ENTRIES.
  if (given.length > MAX_SIGNATURE_ENTRIES) return { valid: false, reason: 'too_many_signatures' };

  let timestamp: string | undefined;
  if (scheme.timestampHeader !== undefined) {
    const stamps = headerValues(input.headers, scheme.timestampHeader);
    if (stamps.length === 0) return { valid: false, reason: 'missing_timestamp' };
    if (stamps.length > 1) return { valid: false, reason: 'malformed_timestamp' };
    const checked = checkTimestamp(stamps[0]!, now(), scheme.toleranceSeconds);
    if (!checked.ok) return { valid: false, reason: checked.reason };
    timestamp = stamps[0];
  }

  const signatures: Buffer[] = [];
  for (const value of given) {
    if (!value.startsWith(scheme.prefix)) continue;
    const decoded = decodeSignature(value.slice(scheme.prefix.length), scheme.encoding);
    if (decoded !== undefined) signatures.push(decoded);
  }
  if (signatures.length === 0) return { valid: false, reason: 'malformed_signature' };

  for (const secret of scheme.secrets) {
    const expected = hmacDigest(secret, scheme, input.rawBody, timestamp);
    if (signatures.some((signature) => digestsEqual(expected, signature))) return { valid: true };
  }
  return { valid: false, reason: 'signature_mismatch' };
}

function createHmacScheme(options: HmacSchemeOptions, called: string): KeyableSignatureScheme {
  const scheme = resolveHmac(options, called);
  const now = resolveClock(options.now);
  return Object.freeze({
    name: 'hmac',
    verify: (input: WebhookVerificationInput) => verifyHmac(scheme, now, input),
    // Signs as the scheme's sender does: the first secret, prefix + encoded digest.
    sign(rawBody: string, signing: WebhookSigningOptions = {}): Record<string, string> {
      const seconds = String(signing.timestamp ?? Math.floor(now() / 1000));
      const headers: Record<string, string> = {};
      if (scheme.timestampHeader !== undefined) headers[scheme.timestampHeader] = seconds;
      const digest = hmacDigest(scheme.secrets[0]!, scheme, Buffer.from(rawBody, 'utf8'), seconds);
      headers[scheme.header] = scheme.prefix + digest.toString(scheme.encoding);
      return headers;
    },
    withSecrets: (secrets: string | readonly string[], clock: { now?: VerifierClock } = {}) =>
      createHmacScheme({ ...options, secrets, now: clock.now ?? options.now }, called),
    // 32 random bytes, hex: the form of the secrets the simulator hands out for this scheme.
    newSecret: () => randomBytes(32).toString('hex'),
  });
}

/**
 * An HMAC scheme the merchant was given, as one object that verifies and signs: the digest of the raw
 * body (or of `${timestamp}.${rawBody}`) keyed by the endpoint secret, in a header. Verification
 * compares in constant time and refuses a malformed header (never throws on it), or more than 8 values
 * of it; signing uses the first secret. Options are checked here, at boot.
 *
 * @example webhooks: { verifier: hmacScheme({ secrets: process.env.WEBHOOK_SECRET!, header: 'x-signature', prefix: 'sha256=' }) }
 */
export function hmacScheme(options: HmacSchemeOptions): KeyableSignatureScheme {
  return createHmacScheme(options, 'hmacScheme');
}

/**
 * The HMAC scheme under its former name: the same object as `hmacScheme(options)` (same checks, same
 * comparison), its option errors named `hmacVerifier({ ... })` as before.
 *
 * @deprecated Use `hmacScheme(options)`: the same options, the same object, one name for verifying and signing.
 */
export function hmacVerifier(options: HmacSchemeOptions): WebhookVerifier {
  return createHmacScheme(options, 'hmacVerifier');
}
