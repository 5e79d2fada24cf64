import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { PaymentsConfigurationError } from '../../errors/index.js';
import type { KeyableSignatureScheme } from '../contracts/keyable-signature-scheme.interface.js';
import type { WebhookSigningOptions } from '../contracts/webhook-signature-scheme.interface.js';
import type { WebhookVerificationInput, WebhookVerificationResult } from '../contracts/webhook-verifier.interface.js';
import {
  newStandardWebhookMsgId,
  readStandardWebhookHeaders,
  STANDARD_WEBHOOKS_HEADERS,
  standardWebhookContent,
  standardWebhooksTolerance,
} from './standard-webhooks.protocol.js';
import { resolveClock, type VerifierClock } from './verifier-clock.js';
import { normaliseSecrets } from './verifier-options.util.js';

/** Options of `standardWebhooksEd25519`: give `publicKeys` to a receiver, `privateKeys` to a sender. */
export interface StandardWebhooksEd25519Options {
  /**
   * The sender's public key, `whpk_` + base64 of the 32-byte Ed25519 key, or several while rotating
   * (any one may match). What a receiver holds: never a private key.
   */
  publicKeys?: string | readonly string[];
  /**
   * The sender's private key, `whsk_` + base64 of the 32-byte seed (or of seed + public key, 64 bytes),
   * or several while rotating: `sign` writes one `v1a` entry per key. Only a sender holds it (a test,
   * the simulator); the scheme then also verifies with the public halves.
   */
  privateKeys?: string | readonly string[];
  /** Allowed distance, in seconds, between `webhook-timestamp` and now, both ways. Default 300. */
  toleranceSeconds?: number;
  /** Clock (ms since epoch); a `PaymentsRuntime` fits. Default `Date.now`. */
  now?: VerifierClock;
}

const PUBLIC_PREFIX = 'whpk_';
const PRIVATE_PREFIX = 'whsk_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
// DER headers of a raw Ed25519 key (RFC 8410): SubjectPublicKeyInfo, and PKCS #8 around the 32-byte seed.
const SPKI_HEADER = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_HEADER = Buffer.from('302e020100300506032b657004220420', 'hex');
const SIGNATURE_BYTES = 64;

interface Keys {
  verifying: KeyObject[];
  signing: KeyObject[];
}

/** Decodes `prefix` + base64 into bytes of one of `lengths`, or throws naming `option` (never the key). */
function decodeKey(option: string, value: string, prefix: string, lengths: readonly number[], what: string): Buffer {
  const fix =
    prefix === PUBLIC_PREFIX
      ? "pass the sender's public key as it was published: whpk_ followed by base64"
      : "pass the sender's private key as it was generated: whsk_ followed by base64";
  if (value.startsWith('whsec_')) {
    throw new PaymentsConfigurationError(
      option,
      'is a symmetric Standard Webhooks secret (whsec_), not an Ed25519 key',
      `use standardWebhooks({ secrets }) for whsec_ secrets; for this scheme, ${fix}`,
    );
  }
  if (!value.startsWith(prefix)) {
    throw new PaymentsConfigurationError(option, `does not start with ${prefix}`, fix);
  }
  const encoded = value.slice(prefix.length);
  const bytes = BASE64.test(encoded) && encoded.length % 4 !== 1 ? Buffer.from(encoded, 'base64') : undefined;
  if (bytes === undefined || !lengths.includes(bytes.length)) {
    throw new PaymentsConfigurationError(option, `is not ${prefix} followed by the base64 of ${what}`, fix);
  }
  return bytes;
}

function publicKeyOf(option: string, value: string): KeyObject {
  if (value.startsWith(PRIVATE_PREFIX)) {
    throw new PaymentsConfigurationError(
      option,
      'is a private key (whsk_): a receiver must never hold the key that signs',
      "pass the sender's public key (whpk_...) instead; the private key stays with the sender (or goes in privateKeys where deliveries are signed, e.g. a test)",
    );
  }
  const raw = decodeKey(option, value, PUBLIC_PREFIX, [32], 'a 32-byte Ed25519 public key');
  return createPublicKey({ key: Buffer.concat([SPKI_HEADER, raw]), format: 'der', type: 'spki' });
}

function privateKeyOf(option: string, value: string): KeyObject {
  if (value.startsWith(PUBLIC_PREFIX)) {
    throw new PaymentsConfigurationError(
      option,
      'is a public key (whpk_), which cannot sign',
      'pass the private key (whsk_...) where deliveries are signed, or move this key to publicKeys to verify with it',
    );
  }
  const raw = decodeKey(option, value, PRIVATE_PREFIX, [32, 64], 'a 32-byte Ed25519 seed (or seed + public key)');
  const key = createPrivateKey({
    key: Buffer.concat([PKCS8_HEADER, raw.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
  if (raw.length === 64 && !rawPublicKey(createPublicKey(key)).equals(raw.subarray(32))) {
    throw new PaymentsConfigurationError(
      option,
      'holds a public half that does not belong to its seed',
      'pass the private key exactly as it was generated (whsk_ followed by base64)',
    );
  }
  return key;
}

const rawPublicKey = (key: KeyObject): Buffer =>
  key.export({ format: 'der', type: 'spki' }).subarray(SPKI_HEADER.length);

/**
 * The public key (`whpk_...`) of an Ed25519 private key (`whsk_...`): what a receiver configures as
 * `standardWebhooksEd25519({ publicKeys })` when the sender signs with `privateKey` (e.g. the simulator
 * CLI prints it). A key that is not `whsk_` + base64 throws naming `option`, never quoting the key.
 */
export function standardWebhooksEd25519PublicKey(
  privateKey: string,
  option = 'standardWebhooksEd25519PublicKey(privateKey)',
): string {
  return `${PUBLIC_PREFIX}${rawPublicKey(createPublicKey(privateKeyOf(option, privateKey))).toString('base64')}`;
}

/** A list option (a string or an array), each entry decoded by `decode` under its own name. */
function keyList<T>(option: string, given: unknown, decode: (option: string, value: string) => T): T[] {
  if (given === undefined) return [];
  return normaliseSecrets(option, given).map((value, index) =>
    decode(Array.isArray(given) ? `${option}[${index}]` : option, value),
  );
}

function createEd25519Scheme(options: StandardWebhooksEd25519Options, keys: Keys): KeyableSignatureScheme {
  const o = options;
  const toleranceSeconds = standardWebhooksTolerance(
    'standardWebhooksEd25519({ toleranceSeconds })',
    o.toleranceSeconds,
  );
  const now = resolveClock(o.now);
  return Object.freeze({
    name: 'standard-webhooks-ed25519',
    verify(input: WebhookVerificationInput): WebhookVerificationResult {
      const read = readStandardWebhookHeaders(input, 'v1a', now(), toleranceSeconds);
      if (!read.ok) return { valid: false, reason: read.reason };
      const signatures = read.signatures.filter((signature) => signature.length === SIGNATURE_BYTES);
      if (signatures.length === 0) return { valid: false, reason: 'malformed_signature' };
      // A signature check, not a MAC: nothing is compared byte by byte, so no timing leak to guard.
      const content = standardWebhookContent(read.msgId, read.seconds, input.rawBody);
      for (const key of keys.verifying) {
        if (signatures.some((signature) => verify(null, content, key, signature))) return { valid: true };
      }
      return { valid: false, reason: 'signature_mismatch' };
    },
    // One `v1a` entry per private key, space-separated: the spec's zero-downtime rotation.
    sign(rawBody: string, signing: WebhookSigningOptions = {}): Record<string, string> {
      if (keys.signing.length === 0) {
        throw new PaymentsConfigurationError(
          'standardWebhooksEd25519({ privateKeys })',
          'is not set, so this scheme can verify but not sign',
          "pass the sender's private key (whsk_...) where deliveries are signed (a test, the simulator); a receiver needs only publicKeys",
        );
      }
      const msgId = signing.msgId ?? newStandardWebhookMsgId();
      const seconds = String(signing.timestamp ?? Math.floor(now() / 1000));
      const content = standardWebhookContent(msgId, seconds, rawBody);
      return {
        [STANDARD_WEBHOOKS_HEADERS.id]: msgId,
        [STANDARD_WEBHOOKS_HEADERS.timestamp]: seconds,
        [STANDARD_WEBHOOKS_HEADERS.signature]: keys.signing
          .map((key) => `v1a,${sign(null, content, key).toString('base64')}`)
          .join(' '),
      };
    },
    // `whsk_` entries sign (and verify through their public halves), `whpk_` entries verify.
    withSecrets(secrets: string | readonly string[], clock: { now?: VerifierClock } = {}) {
      const option = 'standardWebhooksEd25519(...).withSecrets(secrets)';
      const list = normaliseSecrets(option, secrets);
      const where = (index: number) => (Array.isArray(secrets) ? `${option}[${index}]` : option);
      const signing = list.flatMap((v, i) => (v.startsWith(PRIVATE_PREFIX) ? [privateKeyOf(where(i), v)] : []));
      const verifying = list.flatMap((v, i) => (v.startsWith(PRIVATE_PREFIX) ? [] : [publicKeyOf(where(i), v)]));
      return createEd25519Scheme(
        { ...o, now: clock.now ?? o.now },
        { signing, verifying: [...verifying, ...signing.map((key) => createPublicKey(key))] },
      );
    },
    // A fresh private key: the simulator signs an endpoint's deliveries with it.
    newSecret: () => {
      const { privateKey } = generateKeyPairSync('ed25519');
      const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_HEADER.length);
      return `${PRIVATE_PREFIX}${seed.toString('base64')}`;
    },
  });
}

/**
 * The Standard Webhooks asymmetric scheme (`v1a`, Ed25519) as one object that verifies and signs: the
 * sender signs `${webhook-id}.${webhook-timestamp}.${body}` with its private key and sends
 * `webhook-signature: v1a,<base64>` (space-separated entries while rotating, at most 8; `v1` entries ignored); the
 * receiver verifies with the public key alone, within `toleranceSeconds` of the timestamp. Keys as the
 * spec serialises them: `whpk_` public, `whsk_` private. Options are checked here, at boot: a private key
 * given as a public one, or a malformed key, is refused with the option and the fix.
 *
 * @example webhooks: { verifier: standardWebhooksEd25519({ publicKeys: process.env.PAYMENTS_WEBHOOK_PUBLIC_KEY! }) }
 */
export function standardWebhooksEd25519(options: StandardWebhooksEd25519Options): KeyableSignatureScheme {
  const o = (options ?? {}) as StandardWebhooksEd25519Options;
  const verifying = keyList('standardWebhooksEd25519({ publicKeys })', o.publicKeys, publicKeyOf);
  const signing = keyList('standardWebhooksEd25519({ privateKeys })', o.privateKeys, privateKeyOf);
  if (verifying.length === 0 && signing.length === 0) {
    throw new PaymentsConfigurationError(
      'standardWebhooksEd25519({ publicKeys })',
      'is missing',
      "pass the sender's public key (whpk_...), or several while rotating; privateKeys (whsk_...) only where deliveries are signed",
    );
  }
  return createEd25519Scheme(o, { signing, verifying: [...verifying, ...signing.map((key) => createPublicKey(key))] });
}
