import { describe, expect, it } from '@jest/globals';
import { PaymentsInvalidArgumentError } from '../../../lib/index.js';
import { assertRelativePath } from '../../../lib/client/payments-request.validation.js';

/** Segments that some common server, proxy or framework reads as '.' or '..'. */
const DOT_SEGMENT_SPELLINGS: Array<[string, string]> = [
  ['..;', 'Tomcat/Jetty path parameter'],
  ['..;x=1', 'path parameter with a value'],
  ['.;x', 'single dot with a parameter'],
  ['..%3b', 'encoded ";"'],
  ['%2e%2e%3Bfoo', 'fully encoded "..;foo"'],
  ['%2e', 'encoded "."'],
  ['.%2E', 'mixed-case encoded ".."'],
  ['%252e%252e', 'double-encoded ".."'],
  ['%25252e', 'triple-encoded "."'],
  ['%EF%BC%8E%EF%BC%8E', 'full-width dots U+FF0E'],
  ['%ef%bc%8e', 'one full-width dot'],
  ['%E2%80%A4', 'one-dot leader U+2024'],
  ['%E2%80%A4%E2%80%A4', 'two one-dot leaders'],
  ['%E2%80%A5', 'two-dot leader U+2025'],
  ['%EF%B9%92%EF%B9%92', 'small full stops U+FE52'],
  ['%E3%80%82%E3%80%82', 'ideographic full stops U+3002'],
  ['%25EF%25BC%258E%25EF%25BC%258E', 'double-encoded full-width dots'],
  ['...', 'three dots (Windows reads trailing dots away)'],
  ['..%20', 'trailing space'],
  ['.%20.', 'dot space dot'],
];

describe('request() path: no dot-segment in any spelling', () => {
  it.each(DOT_SEGMENT_SPELLINGS)('refuses /v1/%s/secret (%s) before anything is sent', (segment) => {
    const call = () => assertRelativePath(`/payment_intents/${segment}/webhook_endpoints`, 'request');
    expect(call).toThrow(PaymentsInvalidArgumentError);
    expect(call).toThrow(/`path` must not contain a '\.' or '\.\.' segment/);
  });

  it('refuses a full-width solidus that normalises to "/"', () => {
    expect(() => assertRelativePath('/a/..%EF%BC%8Fb', 'request')).toThrow(PaymentsInvalidArgumentError);
  });

  it('still accepts ordinary segments that merely contain dots, semicolons or escapes', () => {
    for (const path of [
      '/a.b/.c/..d',
      '/files/report.v2.json',
      '/x;y',
      '/search/100%25',
      '/caf%C3%A9',
      '/v1/..a',
      '/a/.well-known',
    ]) {
      expect(assertRelativePath(path, 'request')).toBe(path);
    }
  });
});
