import type { WebhookVerificationInput } from './webhook-verifier.interface.js';

/**
 * Every value of a header, case-insensitively. Node lower-cases names already; a verifier called by
 * hand may not. Empty strings are dropped, so an empty header counts as missing.
 */
export function headerValues(headers: WebhookVerificationInput['headers'], name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      const trimmed = v.trim();
      if (trimmed !== '') values.push(trimmed);
    }
  }
  return values;
}
