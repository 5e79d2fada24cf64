import { describe, expect, it } from '@jest/globals';
import {
  backoffDelayMs,
  isRetryableConnectionError,
  isRetryableStatus,
  parseRetryAfterMs,
  retryDelayMs,
} from '../../../lib/client/payments-retry.policy.js';

const policy = (random: number, baseDelayMs = 500, maxDelayMs = 30_000) => ({
  baseDelayMs,
  maxDelayMs,
  random: () => random,
});

describe('retry policy', () => {
  it('[L1] backoff doubles per retry: random() * base * 2^n', () => {
    expect([0, 1, 2, 3].map((n) => backoffDelayMs(n, policy(1 - Number.EPSILON)))).toEqual(
      [0, 1, 2, 3].map((n) => (1 - Number.EPSILON) * 500 * 2 ** n),
    );
    expect([0, 1, 2].map((n) => backoffDelayMs(n, policy(0.25)))).toEqual([125, 250, 500]);
  });

  it('[L1] full jitter: random() = 0 waits nothing, and the wait scales with random()', () => {
    expect(backoffDelayMs(4, policy(0))).toBe(0);
    expect(backoffDelayMs(1, policy(0.1))).toBe(100);
    expect(backoffDelayMs(1, policy(0.9))).toBe(900);
  });

  it('[L1] the exponential step is capped at maxDelayMs before the jitter applies', () => {
    expect(backoffDelayMs(10, policy(0.5, 500, 4000))).toBe(2000);
    expect(backoffDelayMs(60, policy(1, 500, 4000))).toBe(4000);
  });

  it('Retry-After in seconds is read as milliseconds', () => {
    expect(parseRetryAfterMs('3', 0)).toBe(3000);
    expect(parseRetryAfterMs(' 0 ', 0)).toBe(0);
    expect(parseRetryAfterMs(['2', '9'], 0)).toBe(2000);
  });

  it('Retry-After as an HTTP date is the time left until then, never negative', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  });

  it('an absent or unreadable Retry-After is ignored', () => {
    expect(parseRetryAfterMs(undefined, 0)).toBeUndefined();
    expect(parseRetryAfterMs('', 0)).toBeUndefined();
    expect(parseRetryAfterMs('soon', 0)).toBeUndefined();
    expect(parseRetryAfterMs('-5', 0)).toBeUndefined();
  });

  it('Retry-After, when given, replaces the jittered backoff and is capped by maxDelayMs', () => {
    expect(retryDelayMs(0, 1500, policy(0.5))).toBe(1500);
    expect(retryDelayMs(0, 90_000, policy(0.5, 500, 30_000))).toBe(30_000);
    expect(retryDelayMs(2, undefined, policy(0.5))).toBe(1000);
  });

  it('429 is retried for every method; 502/503/504 only for GET; 401, 403, 500 never', () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const)
      expect(isRetryableStatus(method, 429)).toBe(true);
    for (const status of [502, 503, 504]) {
      expect(isRetryableStatus('GET', status)).toBe(true);
      expect(isRetryableStatus('POST', status)).toBe(false);
    }
    for (const status of [400, 401, 403, 404, 409, 500]) {
      expect(isRetryableStatus('GET', status)).toBe(false);
      expect(isRetryableStatus('POST', status)).toBe(false);
    }
  });

  it('a GET is retried on any connection error; a POST only on ECONNREFUSED', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'])
      expect(isRetryableConnectionError('GET', code)).toBe(true);
    expect(isRetryableConnectionError('POST', 'ECONNREFUSED')).toBe(true);
    for (const code of ['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNECTION'])
      expect(isRetryableConnectionError('POST', code)).toBe(false);
  });
});
