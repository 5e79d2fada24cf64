import type { WebhookVerificationInput } from '../contracts/webhook-verifier.interface.js';

/**
 * Every value of a header, case-insensitively. Node lower-cases names already; a verifier called by
 * hand may not. Empty strings are dropped, so an empty header counts as missing.
 */
export function headerValues(headers: WebhookVerificationInput['headers'], name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const key of Object.keys(headers)) {
    // Length first: most names differ in length, and no lower-cased copy is made for them.
    if (key.length !== wanted.length || (key !== wanted && key.toLowerCase() !== wanted)) continue;
    const value = headers[key];
    if (value === undefined) continue;
    if (typeof value === 'string') pushTrimmed(values, value);
    else for (const v of value) pushTrimmed(values, v);
  }
  return values;
}

function pushTrimmed(values: string[], value: string): void {
  const trimmed = value.trim();
  if (trimmed !== '') values.push(trimmed);
}
