import { timingSafeEqual } from 'node:crypto';

const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The most signature entries a scheme checks in one delivery. A sender lists several only while it
 * rotates keys (two, rarely three); an unsigned request listing hundreds would otherwise buy one
 * comparison or Ed25519 verification per entry and key. A delivery with more entries than this (of the
 * scheme's own version) is refused as invalid before any of them is checked.
 */
export const MAX_SIGNATURE_ENTRIES = 8;

/** Encodings a signature header may use. */
export type SignatureEncoding = 'hex' | 'base64';

/**
 * Decodes a signature strictly. `Buffer.from` silently skips bad characters, which would let a
 * malformed header decode to something; here a wrong alphabet or length gives `undefined`.
 */
export function decodeSignature(value: string, encoding: SignatureEncoding): Buffer | undefined {
  if (encoding === 'hex') return HEX.test(value) ? Buffer.from(value, 'hex') : undefined;
  if (!BASE64.test(value) || value.length % 4 === 1) return undefined;
  return Buffer.from(value, 'base64');
}

/** Constant-time equality of two digests; a length mismatch is simply `false`. */
export function digestsEqual(expected: Buffer, given: Buffer): boolean {
  return expected.length === given.length && timingSafeEqual(expected, given);
}
