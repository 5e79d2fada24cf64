import { describe, expect, it } from '@jest/globals';
import { redactSecret } from '../../../lib/client/payments-secret.redactor.js';

const KEY = 'sk_test_REDACTME_123';

describe('redactSecret', () => {
  it('replaces every occurrence of the key in a string', () => {
    expect(redactSecret(`a ${KEY} b ${KEY}`, KEY)).toBe('a [REDACTED] b [REDACTED]');
  });

  it('replaces the key in nested values and in object keys, without changing the input', () => {
    const body = { [KEY]: { list: [KEY, 1, null, true], text: `x${KEY}y` } };
    expect(redactSecret(body, KEY)).toEqual({
      '[REDACTED]': { list: ['[REDACTED]', 1, null, true], text: 'x[REDACTED]y' },
    });
    expect(Object.keys(body)).toEqual([KEY]);
  });

  it('leaves bodies without the key equal', () => {
    const body = { a: [1, { b: 'c' }], d: null };
    expect(redactSecret(body, KEY)).toEqual(body);
    expect(redactSecret(undefined, KEY)).toBeUndefined();
    expect(redactSecret(7, KEY)).toBe(7);
  });
});
