import { randomUUID } from 'node:crypto';
import { PaymentsConfigurationError } from '../../errors/index.js';
import type { WebhookVerificationInput } from '../contracts/webhook-verifier.interface.js';
import { decodeSignature, MAX_SIGNATURE_ENTRIES } from './signature-compare.util.js';
import { headerValues } from './webhook-headers.util.js';
import { checkTimestamp, DEFAULT_TOLERANCE_SECONDS, isValidTolerance } from './webhook-timestamp.util.js';

/*
 * The Standard Webhooks protocol, whatever the signature algorithm: its three headers, the message id,
 * the timestamp tolerance, the signed content `${id}.${timestamp}.${body}` and the versioned entries of
 * `webhook-signature`. Every Standard Webhooks scheme builds on it: `standardWebhooks` (`v1`, HMAC-SHA256,
 * standard-webhooks.scheme.ts) and `standardWebhooksEd25519` (`v1a`, standard-webhooks-ed25519.scheme.ts);
 * each adds only its keys and its signature computation.
 */

/** Header names of the Standard Webhooks protocol (the same for every one of its schemes). */
export const STANDARD_WEBHOOKS_HEADERS = Object.freeze({
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
});

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
