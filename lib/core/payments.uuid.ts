import { createHash } from 'node:crypto';

/**
 * True for a UUID string (any version, either case: 8-4-4-4-12 hex digits): ids of intents, events and
 * endpoints. A loop over the char codes rather than a regular expression: it runs three times per
 * delivery (event, endpoint, intent), and costs a fraction of a regular expression's match.
 */
export function isUuid(value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = value.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45 /* - */) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) {
      return false;
    }
  }
  return true;
}

/** A UUID in lower case: `uuid` itself when it has no upper-case letter (no new string). */
export function lowerCaseUuid(uuid: string): string {
  for (let i = 0; i < uuid.length; i++) {
    const c = uuid.charCodeAt(i);
    if (c >= 65 && c <= 90) return uuid.toLowerCase();
  }
  return uuid;
}

/**
 * A name-based UUID (RFC 9562 version 5: SHA-1 of `namespace` and `name`): the same name always gives
 * the same id. Its version digit is 5, so it never equals a random (version 4) id.
 */
export function uuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replace(/-/g, ''), 'hex'))
    .update(name)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
