import { createHmac } from 'node:crypto';
import { PaymentsConfigurationError } from '../../errors/index.js';
import { decodeSignature, digestsEqual, type SignatureEncoding } from './signature-compare.util.js';
import { resolveClock, type VerifierClock } from './verifier-clock.js';
import { headerValues } from './webhook-headers.util.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, isValidTolerance } from './webhook-timestamp.util.js';
import type {
  WebhookVerificationInput,
  WebhookVerificationResult,
  WebhookVerifier,
} from '../contracts/webhook-verifier.interface.js';
import { normaliseSecrets } from './verifier-options.util.js';

/** Digest algorithms `hmacVerifier` supports. */
export type HmacAlgorithm = 'sha256' | 'sha512';

/** What an HMAC scheme signs: the raw body, or `${timestamp}.${rawBody}`. */
export type HmacSignedPayload = 'body' | 'timestamp.body';

/** Options of `hmacVerifier`: the HMAC scheme the service gave the merchant, described field by field. */
export interface HmacVerifierOptions {
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

const ALGORITHMS: readonly HmacAlgorithm[] = ['sha256', 'sha512'];
const ENCODINGS: readonly SignatureEncoding[] = ['hex', 'base64'];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The validated scheme, as `hmacVerifier` and the test signer share it. */
export interface HmacScheme {
  secrets: string[];
  header: string;
  algorithm: HmacAlgorithm;
  encoding: SignatureEncoding;
  prefix: string;
  timestampHeader: string | undefined;
  toleranceSeconds: number;
  signedPayload: HmacSignedPayload;
}

/** Validates `hmacVerifier` options, throwing a `PaymentsConfigurationError` that names the option and the fix. */
export function resolveHmacScheme(options: Omit<HmacVerifierOptions, 'now'>): HmacScheme {
  const o = (options ?? {}) as Partial<HmacVerifierOptions>;
  const secrets = normaliseSecrets('hmacVerifier({ secrets })', o.secrets);
  if (typeof o.header !== 'string' || !HEADER_NAME.test(o.header)) {
    throw new PaymentsConfigurationError(
      'hmacVerifier({ header })',
      'is missing or not a valid header name',
      "pass the name of the header that carries the signature, e.g. 'x-signature'",
    );
  }
  const algorithm = o.algorithm ?? 'sha256';
  if (!ALGORITHMS.includes(algorithm)) {
    throw new PaymentsConfigurationError(
      'hmacVerifier({ algorithm })',
      `is not one of ${ALGORITHMS.join(', ')}`,
      "pass 'sha256' (the default) or 'sha512'",
    );
  }
  const encoding = o.encoding ?? 'hex';
  if (!ENCODINGS.includes(encoding)) {
    throw new PaymentsConfigurationError(
      'hmacVerifier({ encoding })',
      `is not one of ${ENCODINGS.join(', ')}`,
      "pass 'hex' (the default) or 'base64'",
    );
  }
  if (o.prefix !== undefined && typeof o.prefix !== 'string') {
    throw new PaymentsConfigurationError(
      'hmacVerifier({ prefix })',
      'is not a string',
      "pass the text before the digest, e.g. 'sha256=', or leave it out",
    );
  }
  if (
    o.timestampHeader !== undefined &&
    (typeof o.timestampHeader !== 'string' || !HEADER_NAME.test(o.timestampHeader))
  ) {
    throw new PaymentsConfigurationError(
      'hmacVerifier({ timestampHeader })',
      'is not a valid header name',
      "pass the name of the header carrying the unix timestamp, e.g. 'x-timestamp', or leave it out",
    );
  }
  const toleranceSeconds = o.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!isValidTolerance(toleranceSeconds)) {
    throw new PaymentsConfigurationError(
      'hmacVerifier({ toleranceSeconds })',
      'is negative or not a number',
      'pass a number of seconds >= 0 (default 300)',
    );
  }
  const signedPayload = o.signedPayload ?? 'body';
  if (signedPayload !== 'body' && signedPayload !== 'timestamp.body') {
    throw new PaymentsConfigurationError(
      'hmacVerifier({ signedPayload })',
      "is not 'body' or 'timestamp.body'",
      "pass 'body' (the default) or 'timestamp.body'",
    );
  }
  if (signedPayload === 'timestamp.body' && o.timestampHeader === undefined) {
    throw new PaymentsConfigurationError(
      'hmacVerifier({ signedPayload })',
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
function hmacDigest(secret: string, scheme: HmacScheme, rawBody: Buffer, timestamp: string | undefined): Buffer {
  const mac = createHmac(scheme.algorithm, secret);
  if (scheme.signedPayload === 'timestamp.body') mac.update(`${timestamp}.`);
  mac.update(rawBody);
  return mac.digest();
}

/**
 * The header value a sender of this scheme would put in `scheme.header` (prefix + encoded digest),
 * signed with the first secret. For the testing kit and the simulator.
 */
export function signHmacPayload(rawBody: Buffer | string, scheme: HmacScheme, timestamp?: string): string {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return scheme.prefix + hmacDigest(scheme.secrets[0]!, scheme, body, timestamp).toString(scheme.encoding);
}

/**
 * A verifier for an HMAC scheme the merchant was given: the digest of the raw body (or of
 * `${timestamp}.${rawBody}`) keyed by the endpoint secret, in a header. Comparison is constant-time;
 * a malformed header is refused, never thrown on. Options are checked here, at boot.
 *
 * @example hmacVerifier({ secrets: process.env.WEBHOOK_SECRET!, header: 'x-signature', prefix: 'sha256=' })
 */
export function hmacVerifier(options: HmacVerifierOptions): WebhookVerifier {
  const scheme = resolveHmacScheme(options);
  const now = resolveClock(options.now);
  return {
    verify(input: WebhookVerificationInput): WebhookVerificationResult {
      const given = headerValues(input.headers, scheme.header);
      if (given.length === 0) return { valid: false, reason: 'missing_signature' };

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
    },
  };
}
