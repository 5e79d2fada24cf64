/** What replaces the API key wherever the service echoed it. */
export const REDACTED = '[REDACTED]';

const MAX_DEPTH = 64;

/**
 * Returns a copy of `value` (a parsed response body) where every occurrence of `secret`, in a string
 * or in an object key, is replaced by `[REDACTED]`. Used on error bodies, so that a buggy or hostile
 * server echoing the key cannot put it into an error, a log line or an error tracker.
 */
export function redactSecret<T>(value: T, secret: string): T {
  if (secret === '') return value;
  const walk = (item: unknown, depth: number): unknown => {
    if (typeof item === 'string') return item.split(secret).join(REDACTED);
    if (typeof item !== 'object' || item === null) return item;
    if (depth >= MAX_DEPTH) return REDACTED;
    if (Array.isArray(item)) return item.map((entry) => walk(entry, depth + 1));
    const copy: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(item)) {
      copy[key.split(secret).join(REDACTED)] = walk(entry, depth + 1);
    }
    return copy;
  };
  return walk(value, 0) as T;
}
