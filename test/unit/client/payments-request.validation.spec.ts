import { describe, expect, it } from '@jest/globals';
import { PaymentsInvalidArgumentError } from '../../../lib/index.js';
import {
  assertMethod,
  assertParams,
  assertRelativePath,
  assertUuid,
  buildQueryString,
  sanitizeHeaders,
} from '../../../lib/client/payments-request.validation.js';

describe('request validation', () => {
  it('[E2] assertUuid accepts UUIDs in either case', () => {
    expect(assertUuid('3f1c2a9e-8b7d-4c6e-9a5f-1b2c3d4e5f60', 'x')).toBe('3f1c2a9e-8b7d-4c6e-9a5f-1b2c3d4e5f60');
    expect(assertUuid('3F1C2A9E-8B7D-4C6E-9A5F-1B2C3D4E5F60', 'x')).toBe('3F1C2A9E-8B7D-4C6E-9A5F-1B2C3D4E5F60');
  });

  it('[E2] assertUuid refuses anything else with PaymentsInvalidArgumentError naming the call and argument', () => {
    for (const bad of [
      '',
      'pi_123',
      '3f1c2a9e8b7d4c6e9a5f1b2c3d4e5f60',
      ' 3f1c2a9e-8b7d-4c6e-9a5f-1b2c3d4e5f60',
      '3f1c2a9e-8b7d-4c6e-9a5f-1b2c3d4e5f60/x',
      42,
      null,
      undefined,
      {},
    ]) {
      expect(() => assertUuid(bad, 'paymentIntents.retrieve')).toThrow(PaymentsInvalidArgumentError);
    }
    expect(() => assertUuid('nope', 'paymentIntents.retrieve')).toThrow(
      /paymentIntents\.retrieve: `id` must be a UUID, got a string of 4 character\(s\)\. Nothing was sent/,
    );
  });

  it('assertUuid never echoes the value it refuses', () => {
    expect(() => assertUuid('sk_live_secretish', 'x')).not.toThrow(/sk_live_secretish/);
  });

  it('assertRelativePath accepts ordinary relative paths', () => {
    for (const path of [
      '/',
      '/webhook_requests',
      '/webhook_requests/3f1c2a9e-8b7d-4c6e-9a5f-1b2c3d4e5f60/attempts',
      '/a:b/c@d/~e/f%20g',
      '/a.b/.c/..d',
    ]) {
      expect(assertRelativePath(path, 'request')).toBe(path);
    }
  });

  it('assertRelativePath refuses absolute URLs, //, dot segments (even encoded), ?, #, \\ and control characters', () => {
    const bad = [
      'https://evil.example/x',
      'http:/evil',
      'evil.example/x',
      '//evil.example/x',
      '/a//b',
      '/..',
      '/a/../b',
      '/a/./b',
      '/a/%2e%2E/b',
      '/a/%2e/b',
      '/a%2f..%2fb',
      '/a%5cb',
      '/a%00b',
      '/a?b=1',
      '/a#b',
      '/a\\b',
      '/a b',
      '/a\tb',
      '/%',
      '/%zz',
      '',
    ];
    for (const path of bad) expect(() => assertRelativePath(path, 'request')).toThrow(PaymentsInvalidArgumentError);
    expect(() => assertRelativePath(42, 'request')).toThrow(PaymentsInvalidArgumentError);
  });

  it('assertMethod accepts the five methods and refuses others', () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
      expect(assertMethod(method, 'request')).toBe(method);
    for (const method of ['get', 'TRACE', 'CONNECT', undefined])
      expect(() => assertMethod(method, 'request')).toThrow(/`method`/);
  });

  it('buildQueryString encodes values, repeats arrays and skips undefined', () => {
    expect(buildQueryString({ a: 'x y', b: 2, c: true, d: ['1', 2], e: undefined }, 'request')).toBe(
      'a=x+y&b=2&c=true&d=1&d=2',
    );
    expect(buildQueryString(undefined, 'request')).toBe('');
    expect(buildQueryString({ '&x': '=&' }, 'request')).toBe('%26x=%3D%26');
  });

  it('buildQueryString refuses objects, null, NaN and non-object queries', () => {
    for (const query of [{ a: { b: 1 } }, { a: null }, { a: Number.NaN }, { a: [{}] }, 'a=1', ['a']]) {
      expect(() => buildQueryString(query, 'request')).toThrow(PaymentsInvalidArgumentError);
    }
  });

  it('[A6] sanitizeHeaders drops X-Account-Id, X-Api-Key, X-Api-Version and hop-by-hop headers in any case', () => {
    expect(
      sanitizeHeaders(
        {
          'X-Account-Id': 'a',
          'x-account-id': 'b',
          'X-API-KEY': 'k',
          'x-api-version': '9',
          Host: 'evil',
          'Content-Length': '1',
          'Transfer-Encoding': 'chunked',
          Connection: 'close',
          'X-Tag': 't',
        },
        'request',
      ),
    ).toEqual({ 'X-Tag': 't' });
  });

  it('sanitizeHeaders refuses invalid names, non-string values and CR/LF injection', () => {
    for (const headers of [{ 'bad name': 'x' }, { 'X-A': 1 }, { 'X-A': 'a\r\nX-Account-Id: 1' }, 'x', null]) {
      expect(() => sanitizeHeaders(headers, 'request')).toThrow(PaymentsInvalidArgumentError);
    }
  });

  it('assertParams requires a plain object', () => {
    expect(assertParams({ amount: 1 }, 'paymentIntents.create')).toEqual({ amount: 1 });
    for (const params of [null, [], 'x', 1])
      expect(() => assertParams(params, 'paymentIntents.create')).toThrow(/`params` must be an object/);
  });
});
