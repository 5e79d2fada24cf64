import { PaymentsInvalidArgumentError, type PaymentsHttpMethod } from '../errors/payments.errors.js';
import { NOTHING_SENT_NOTE } from '../errors/payments.messages.js';
import { isUuid } from '../core/payments.uuid.js';
import type { PaymentsQuery } from './payments-request.interface.js';

/** The error of a client call refused before the network: names the call and the argument, never the value. */
export const refusedArgument = (where: string, argument: string, problem: string): PaymentsInvalidArgumentError =>
  new PaymentsInvalidArgumentError(where, argument, problem, NOTHING_SENT_NOTE);

/** Methods `request()` accepts. */
export const PAYMENTS_HTTP_METHODS: ReadonlySet<PaymentsHttpMethod> = new Set([
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
]);

/**
 * Characters allowed in a `request()` path: RFC 3986 `pchar` plus `/`. No `?`, `#`, `\`, spaces or
 * control characters; a percent sign only as a valid `%XX` escape (checked separately).
 */
const PATH_CHARS_RE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

/**
 * Headers a caller may not set: the credentials and version the transport owns, the account header
 * the reference forbids, and what Node computes itself.
 */
const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  'x-api-key',
  'x-api-version',
  'x-account-id',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'proxy-authorization',
]);

const HEADER_NAME_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

const describeValue = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'string'
        ? `a string of ${value.length} character(s)`
        : typeof value;

/**
 * Returns `id` when it is a UUID; otherwise throws `PaymentsInvalidArgumentError` (nothing is sent).
 * The value is never echoed.
 */
export function assertUuid(id: unknown, where: string, argument = 'id'): string {
  if (!isUuid(id)) {
    throw refusedArgument(where, argument, `must be a UUID, got ${describeValue(id)}`);
  }
  return id;
}

/** Throws unless `method` is one of GET, POST, PUT, PATCH, DELETE. */
export function assertMethod(method: unknown, where: string): PaymentsHttpMethod {
  if (typeof method !== 'string' || !PAYMENTS_HTTP_METHODS.has(method as PaymentsHttpMethod)) {
    throw refusedArgument(where, 'method', `must be one of ${[...PAYMENTS_HTTP_METHODS].join(', ')}`);
  }
  return method as PaymentsHttpMethod;
}

/** Percent-decoding rounds applied to a segment: a server or proxy may decode more than once. */
const DECODE_ROUNDS = 3;

/**
 * A `request()` path segment as a lenient server might read it: percent-decoded as often as it
 * still changes (up to DECODE_ROUNDS), then NFKC-normalised (full-width U+FF0E, one-dot-leader
 * U+2024 and small full stop U+FE52 become '.', full-width solidi become '/' and '\\'). Throws on a
 * '%' that is not a valid escape.
 */
function readAsServerMight(segment: string): string {
  let current = segment;
  for (let round = 0; round < DECODE_ROUNDS && current.includes('%'); round += 1) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch (error) {
      // The path as given must be valid; a later round's stray '%' is a literal one (e.g. '100%25').
      if (round === 0) throw error;
      break;
    }
    if (decoded === current) break;
    current = decoded;
  }
  if (current.includes('%') && /%[0-9a-f]{2}/i.test(current)) {
    // Still encoded after the rounds: nobody legitimate nests escapes this deep.
    throw new URIError('nested percent-escapes');
  }
  return current.normalize('NFKC');
}

/**
 * Whether a server could take `segment` for '.' or '..': Tomcat and Jetty drop a ';' parameter
 * ('..;x' is '..'), Windows servers strip trailing dots and spaces ('... ' is '..'), some read the
 * ideographic full stop U+3002 as a dot. Any segment made of dots only is refused: no API path has one.
 */
function isDotSegment(segment: string): boolean {
  const withoutParameter = segment.split(';', 1)[0]!;
  const asDots = withoutParameter.replace(/\u3002/g, '.').trim();
  return /^[.\s]+$/.test(asDots) && asDots.includes('.');
}

/**
 * Returns `path` when it is a path relative to the base URL (one leading `/`, no scheme, no `//`,
 * no `.` or `..` segment in any spelling a server could read as one, no `?`, `#` or `\`). Anything else could point the
 * request, and the API key with it, at another host or outside the base path.
 */
export function assertRelativePath(path: unknown, where: string): string {
  const refuse = (problem: string): never => {
    throw refusedArgument(where, 'path', problem);
  };
  if (typeof path !== 'string' || path === '') {
    return refuse(`must be a non-empty string, got ${describeValue(path)}`);
  }
  if (!path.startsWith('/')) {
    return refuse("must start with '/' and be relative to baseUrl (absolute URLs are refused)");
  }
  if (path.includes('//')) {
    return refuse("must not contain '//'");
  }
  if (!PATH_CHARS_RE.test(path)) {
    return refuse(
      "may only contain URL path characters (no '?', '#', '\\', spaces or control characters; pass query parameters in `query`)",
    );
  }
  for (const raw of path.split('/')) {
    let segment: string;
    try {
      segment = readAsServerMight(raw);
    } catch {
      return refuse("contains a '%' that is not a valid percent-escape");
    }
    if (isDotSegment(segment)) {
      return refuse(
        "must not contain a '.' or '..' segment, in any spelling a server could read as one (percent-encoded, full-width or one-dot-leader dots, a ';' parameter, trailing dots or spaces)",
      );
    }
    if (segment.includes('/') || segment.includes('\\') || CONTROL_RE.test(segment)) {
      return refuse("must not contain an encoded '/', '\\' or control character");
    }
  }
  return path;
}

/** Builds the query string (without `?`); throws on a value of the wrong type. */
export function buildQueryString(query: unknown, where: string): string {
  if (query === undefined) return '';
  if (typeof query !== 'object' || query === null || Array.isArray(query)) {
    throw refusedArgument(where, 'query', `must be an object, got ${describeValue(query)}`);
  }
  const params = new URLSearchParams();
  const add = (name: string, value: unknown): void => {
    if (
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value))
    ) {
      params.append(name, String(value));
    } else {
      throw refusedArgument(
        where,
        `query.${name}`,
        `must be a string, a finite number, a boolean or an array of them, got ${describeValue(value)}`,
      );
    }
  };
  for (const [name, value] of Object.entries(query as PaymentsQuery)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) value.forEach((item) => add(name, item));
    else add(name, value);
  }
  return params.toString();
}

/**
 * Returns the caller's headers without the ones the transport owns or the reference forbids
 * (`X-Account-Id`), whatever their case. Throws on a name or value that is not a valid header.
 */
export function sanitizeHeaders(headers: unknown, where: string): Record<string, string> {
  if (headers === undefined) return {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw refusedArgument(where, 'headers', `must be an object of strings, got ${describeValue(headers)}`);
  }
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME_RE.test(name)) {
      throw refusedArgument(where, 'headers', 'contains a name that is not a valid HTTP header name');
    }
    if (FORBIDDEN_HEADERS.has(name.toLowerCase())) continue;
    if (typeof value !== 'string' || CONTROL_RE.test(value.replace(/\t/g, ''))) {
      throw refusedArgument(where, `headers.${name}`, 'must be a string without control characters');
    }
    kept[name] = value;
  }
  return kept;
}

/** Throws unless `params` is a plain object (the create payloads are JSON objects). */
export function assertParams(params: unknown, where: string): Record<string, unknown> {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw refusedArgument(where, 'params', `must be an object, got ${describeValue(params)}`);
  }
  return params as Record<string, unknown>;
}
