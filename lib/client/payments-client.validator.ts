import { DEFAULT_API_VERSION } from '../core/payments.defaults.js';
import { systemRuntime, type PaymentsRuntime } from '../core/payments.runtime.js';
import { fail, isObject, kind, limit } from '../errors/payments-option.checks.js';
import type { ResolvedPaymentsClientOptions } from './payments-client.options.js';

/**
 * Validates the client part of the module options (`apiKey`, `environment`, `baseUrl`,
 * `allowInsecureHttp`, `apiVersion`, `http`, `runtime`) and fills in the defaults. Throws
 * `PaymentsConfigurationError` naming the option and the fix; never echoes `apiKey`.
 */
export function validatePaymentsClientOptions(raw: Record<string, unknown>): ResolvedPaymentsClientOptions {
  if (typeof raw.apiKey !== 'string' || raw.apiKey.trim() === '') {
    fail(
      'apiKey',
      raw.apiKey === undefined ? 'is missing' : 'must be a non-empty string',
      'pass the secret API key from the dashboard, e.g. from an environment variable through ConfigService; never commit it',
    );
  }
  if (/[\s\u0000-\u001f\u007f]/.test(raw.apiKey as string)) {
    fail(
      'apiKey',
      'contains whitespace or a control character (often a trailing newline from an env file or a secret mount)',
      "trim the value before passing it, e.g. `config.getOrThrow<string>('PAYMENTS_API_KEY').trim()`",
    );
  }
  if (raw.environment !== 'sandbox' && raw.environment !== 'production') {
    fail(
      'environment',
      "must be 'sandbox' or 'production'",
      "pass environment: 'sandbox' with a sandbox key, or 'production' with a production key",
    );
  }
  const environment = raw.environment as 'sandbox' | 'production';
  if (typeof raw.baseUrl !== 'string' || raw.baseUrl === '') {
    fail('baseUrl', 'is missing', `pass the ${environment} base address of the service (the reference gives none)`);
  }
  let url: URL;
  try {
    url = new URL(raw.baseUrl as string);
  } catch {
    return fail('baseUrl', 'is not a URL', 'pass an absolute URL such as https://sandbox.example.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail('baseUrl', `has protocol ${url.protocol}`, 'pass an https:// URL');
  }
  if (url.search || url.hash || (raw.baseUrl as string).includes('?') || (raw.baseUrl as string).includes('#')) {
    fail(
      'baseUrl',
      'contains a query string or a fragment',
      'pass only the scheme, host and optional path prefix, e.g. https://sandbox.example.com/v1',
    );
  }
  if (url.username || url.password) {
    fail('baseUrl', 'contains credentials', 'remove them: the API key goes in `apiKey`');
  }
  if (raw.allowInsecureHttp !== undefined && typeof raw.allowInsecureHttp !== 'boolean') {
    fail(
      'allowInsecureHttp',
      `must be a boolean, got ${kind(raw.allowInsecureHttp)}`,
      'pass true only for the local simulator',
    );
  }
  if (url.protocol === 'http:' && raw.allowInsecureHttp !== true) {
    fail(
      'baseUrl',
      'uses plain http:, which would send the API key in clear',
      'use https://, or set allowInsecureHttp: true for the local simulator only',
    );
  }
  if (
    raw.apiVersion !== undefined &&
    (typeof raw.apiVersion !== 'string' ||
      raw.apiVersion.trim() === '' ||
      /[\s\u0000-\u001f\u007f]/.test(raw.apiVersion))
  ) {
    fail('apiVersion', 'must be a non-empty string', `omit it for the documented value '${DEFAULT_API_VERSION}'`);
  }
  if (raw.http !== undefined && !isObject(raw.http)) {
    fail(
      'http',
      `must be an object, got ${kind(raw.http)}`,
      'pass { timeoutMs, maxRetries, maxRetryDelayMs } or omit it',
    );
  }
  const http = (raw.http ?? {}) as Record<string, unknown>;
  const runtime = raw.runtime;
  if (
    runtime !== undefined &&
    (!isObject(runtime) ||
      typeof runtime.now !== 'function' ||
      typeof runtime.sleep !== 'function' ||
      typeof runtime.random !== 'function')
  ) {
    fail('runtime', 'must have now(), sleep(ms) and random()', 'omit it outside tests');
  }

  return {
    apiKey: raw.apiKey as string,
    environment,
    baseUrl: url.toString().replace(/\/+$/, ''),
    apiVersion: (raw.apiVersion as string | undefined) ?? DEFAULT_API_VERSION,
    http: {
      timeoutMs: limit(http.timeoutMs, 'http.timeoutMs', 10_000, { min: 1 }),
      maxRetries: limit(http.maxRetries, 'http.maxRetries', 3),
      maxRetryDelayMs: limit(http.maxRetryDelayMs, 'http.maxRetryDelayMs', 30_000),
      baseRetryDelayMs: limit(http.baseRetryDelayMs, 'http.baseRetryDelayMs', 500),
      maxResponseBytes: limit(http.maxResponseBytes, 'http.maxResponseBytes', 4_194_304, { min: 1024 }),
    },
    runtime: (runtime as PaymentsRuntime | undefined) ?? systemRuntime,
  };
}
