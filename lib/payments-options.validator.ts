import { DEFAULT_API_VERSION, DEFAULT_WEBHOOKS_PATH } from './payments.constants.js';
import { PaymentsConfigurationError } from './errors/payments.errors.js';
import type {
  PaymentsModuleOptions,
  ResolvedPaymentsOptions,
  ResolvedWebhooksOptions,
} from './payments-options.interface.js';
import { systemRuntime } from './core/payments.runtime.js';
import { isUuid } from './core/payments.uuid.js';


const fail = (option: string, problem: string, fix: string): never => {
  throw new PaymentsConfigurationError(option, problem, fix);
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Describes a value for an error message without echoing secrets (only its type). */
const kind = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);

function limit(
  value: unknown,
  option: string,
  fallback: number,
  { min = 0, integer = true }: { min?: number; integer?: boolean } = {},
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return fail(option, `must be a finite number, got ${kind(value)}`, `pass a number >= ${min}, or omit it for the default (${fallback})`);
  }
  if (integer && !Number.isInteger(value)) {
    return fail(option, `must be a whole number, got ${value}`, `pass an integer >= ${min}`);
  }
  if (value < min) {
    return fail(option, `must be >= ${min}, got ${value}`, `pass a number >= ${min}, or omit it for the default (${fallback})`);
  }
  return value;
}

function validateWebhooks(
  raw: unknown,
  environment: 'sandbox' | 'production',
): false | ResolvedWebhooksOptions {
  if (raw === false) return false;
  if (raw === undefined) {
    return fail(
      'webhooks',
      'is missing',
      'pass `webhooks: { verifier: hmacVerifier({...}) | standardWebhooksVerifier({...}) }` to receive webhooks, or `webhooks: false` to register no route',
    );
  }
  if (!isObject(raw)) {
    return fail('webhooks', `must be an object or false, got ${kind(raw)}`, 'pass `webhooks: { verifier }` or `webhooks: false`');
  }
  const verifier = raw.verifier;
  if (!isObject(verifier) || typeof verifier.verify !== 'function') {
    return fail(
      'webhooks.verifier',
      'is required: the service reference shows no signature scheme, so there is no default',
      'pass `hmacVerifier({ secrets, header, ... })` with the scheme the service gave you, `standardWebhooksVerifier({ secrets })`, or an object with a `verify(input)` method',
    );
  }
  let path = DEFAULT_WEBHOOKS_PATH;
  if (raw.path !== undefined) {
    if (typeof raw.path !== 'string' || raw.path.replace(/^\/+|\/+$/g, '') === '') {
      fail('webhooks.path', 'must be a non-empty string', "pass a route such as 'payments/webhooks'");
    }
    path = (raw.path as string).replace(/^\/+|\/+$/g, '');
  }
  let endpointIds: ReadonlySet<string> | undefined;
  if (raw.endpointIds !== undefined) {
    if (!Array.isArray(raw.endpointIds) || raw.endpointIds.length === 0) {
      fail('webhooks.endpointIds', 'must be a non-empty array of webhook endpoint ids', 'pass the UUIDs of your endpoints, or omit it to accept any');
    }
    for (const id of raw.endpointIds as unknown[]) {
      if (!isUuid(id)) {
        fail('webhooks.endpointIds', 'contains a value that is not a UUID', 'pass the `id` of each WebhookEndpoint (a UUID)');
      }
    }
    endpointIds = new Set((raw.endpointIds as string[]).map((id) => id.toLowerCase()));
  }
  const store = raw.store;
  if (
    store !== undefined &&
    (!isObject(store) || typeof store.claim !== 'function' || typeof store.complete !== 'function' || typeof store.release !== 'function')
  ) {
    fail('webhooks.store', 'must implement IdempotencyStore (claim, complete, release)', 'pass `new MemoryIdempotencyStore()`, `new RedisIdempotencyStore(redis)` or omit it');
  }
  const deliveryListener = raw.deliveryListener;
  if (
    deliveryListener !== undefined &&
    (!isObject(deliveryListener) || (typeof deliveryListener.onDelivery !== 'function' && typeof deliveryListener.onDispatch !== 'function'))
  ) {
    fail('webhooks.deliveryListener', 'must implement PaymentDeliveryListener (onDelivery and/or onDispatch)', 'pass `new PaymentDeliveryJournal()` or omit it');
  }
  if (raw.requireHttps !== undefined && typeof raw.requireHttps !== 'boolean') {
    fail('webhooks.requireHttps', `must be a boolean, got ${kind(raw.requireHttps)}`, 'pass true or false, or omit it (true in production)');
  }

  let processing: ResolvedWebhooksOptions['processing'] = 'inline';
  const p = raw.processing;
  if (p !== undefined && p !== 'inline') {
    if (!isObject(p) || !isObject(p.queue)) {
      fail('webhooks.processing', "must be 'inline' or { queue: { connection } }", "pass 'inline' (default) or { queue: { connection: redisClientOrOptions } }");
    }
    const q = (p as { queue: Record<string, unknown> }).queue;
    if (!isObject(q.connection)) {
      fail('webhooks.processing.queue.connection', 'is required', 'pass an ioredis client or ioredis connection options');
    }
    if (q.name !== undefined && (typeof q.name !== 'string' || q.name === '' || q.name.includes(':'))) {
      fail('webhooks.processing.queue.name', 'must be a non-empty string without ":"', "pass a name such as 'payments-webhooks'");
    }
    const backoff = q.backoff;
    if (
      backoff !== undefined &&
      (!isObject(backoff) || (backoff.type !== 'exponential' && backoff.type !== 'fixed'))
    ) {
      fail('webhooks.processing.queue.backoff', "must be { type: 'exponential' | 'fixed', delay }", "pass { type: 'exponential', delay: 1000 }");
    }
    if (q.worker !== undefined && typeof q.worker !== 'boolean') {
      fail('webhooks.processing.queue.worker', 'must be a boolean', 'pass true to run a worker in this instance, false to only enqueue');
    }
    processing = {
      queue: {
        connection: q.connection as object,
        name: (q.name as string | undefined) ?? 'payments-webhooks',
        attempts: limit(q.attempts, 'webhooks.processing.queue.attempts', 10, { min: 1 }),
        backoff: backoff
          ? {
              type: (backoff as { type: 'exponential' | 'fixed' }).type,
              delay: limit((backoff as { delay?: unknown }).delay, 'webhooks.processing.queue.backoff.delay', 1000),
            }
          : { type: 'exponential', delay: 1000 },
        concurrency: limit(q.concurrency, 'webhooks.processing.queue.concurrency', 1, { min: 1 }),
        worker: (q.worker as boolean | undefined) ?? true,
        enqueueTimeoutMs: limit(q.enqueueTimeoutMs, 'webhooks.processing.queue.enqueueTimeoutMs', 5000, { min: 1 }),
        lockDurationMs: limit(q.lockDurationMs, 'webhooks.processing.queue.lockDurationMs', 30_000, { min: 1 }),
        stalledIntervalMs: limit(q.stalledIntervalMs, 'webhooks.processing.queue.stalledIntervalMs', 30_000, { min: 1 }),
      },
    };
  }

  return {
    path,
    verifier: verifier as unknown as ResolvedWebhooksOptions['verifier'],
    endpointIds,
    store: store as ResolvedWebhooksOptions['store'],
    deliveryListener: deliveryListener as ResolvedWebhooksOptions['deliveryListener'],
    claimTtlSeconds: limit(raw.claimTtlSeconds, 'webhooks.claimTtlSeconds', 300, { min: 1 }),
    retentionSeconds: limit(raw.retentionSeconds, 'webhooks.retentionSeconds', 259_200, { min: 1 }),
    maxBodyBytes: limit(raw.maxBodyBytes, 'webhooks.maxBodyBytes', 1_048_576, { min: 1 }),
    requireHttps: (raw.requireHttps as boolean | undefined) ?? environment === 'production',
    processing,
  };
}

/**
 * Validates the module options once, at boot, and fills in defaults. Throws
 * `PaymentsConfigurationError` naming the option and the fix; never echoes `apiKey` or a secret.
 */
export function validatePaymentsOptions(input: PaymentsModuleOptions): ResolvedPaymentsOptions {
  const raw: unknown = input;
  if (!isObject(raw)) {
    return fail('options', `must be an object, got ${kind(raw)}`, 'pass { apiKey, environment, baseUrl, webhooks }');
  }
  if (typeof raw.apiKey !== 'string' || raw.apiKey.trim() === '') {
    fail('apiKey', raw.apiKey === undefined ? 'is missing' : 'must be a non-empty string', 'pass the secret API key from the dashboard, e.g. from an environment variable through ConfigService; never commit it');
  }
  if (/[\s\u0000-\u001f\u007f]/.test(raw.apiKey as string)) {
    fail('apiKey', 'contains whitespace or a control character (often a trailing newline from an env file or a secret mount)', 'trim the value before passing it, e.g. `config.getOrThrow<string>(\'PAYMENTS_API_KEY\').trim()`');
  }
  if (raw.environment !== 'sandbox' && raw.environment !== 'production') {
    fail('environment', "must be 'sandbox' or 'production'", "pass environment: 'sandbox' with a sandbox key, or 'production' with a production key");
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
    fail('baseUrl', 'contains a query string or a fragment', 'pass only the scheme, host and optional path prefix, e.g. https://sandbox.example.com/v1');
  }
  if (url.username || url.password) {
    fail('baseUrl', 'contains credentials', 'remove them: the API key goes in `apiKey`');
  }
  if (raw.allowInsecureHttp !== undefined && typeof raw.allowInsecureHttp !== 'boolean') {
    fail('allowInsecureHttp', `must be a boolean, got ${kind(raw.allowInsecureHttp)}`, 'pass true only for the local simulator');
  }
  if (url.protocol === 'http:' && raw.allowInsecureHttp !== true) {
    fail('baseUrl', 'uses plain http:, which would send the API key in clear', 'use https://, or set allowInsecureHttp: true for the local simulator only');
  }
  if (
    raw.apiVersion !== undefined &&
    (typeof raw.apiVersion !== 'string' || raw.apiVersion.trim() === '' || /[\s\u0000-\u001f\u007f]/.test(raw.apiVersion))
  ) {
    fail('apiVersion', 'must be a non-empty string', `omit it for the documented value '${DEFAULT_API_VERSION}'`);
  }
  if (raw.http !== undefined && !isObject(raw.http)) {
    fail('http', `must be an object, got ${kind(raw.http)}`, 'pass { timeoutMs, maxRetries, maxRetryDelayMs } or omit it');
  }
  const http = (raw.http ?? {}) as Record<string, unknown>;
  const runtime = raw.runtime;
  if (
    runtime !== undefined &&
    (!isObject(runtime) || typeof runtime.now !== 'function' || typeof runtime.sleep !== 'function' || typeof runtime.random !== 'function')
  ) {
    fail('runtime', 'must have now(), sleep(ms) and random()', 'omit it outside tests');
  }

  const resolved: ResolvedPaymentsOptions = {
    apiKey: raw.apiKey as string,
    environment,
    baseUrl: url.toString().replace(/\/+$/, ''),
    apiVersion: (raw.apiVersion as string | undefined) ?? DEFAULT_API_VERSION,
    http: {
      timeoutMs: limit(http.timeoutMs, 'http.timeoutMs', 10_000, { min: 1 }),
      maxRetries: limit(http.maxRetries, 'http.maxRetries', 3),
      maxRetryDelayMs: limit(http.maxRetryDelayMs, 'http.maxRetryDelayMs', 30_000),
      baseRetryDelayMs: limit(http.baseRetryDelayMs, 'http.baseRetryDelayMs', 500),
    },
    webhooks: validateWebhooks(raw.webhooks, environment),
    runtime: (runtime as ResolvedPaymentsOptions['runtime'] | undefined) ?? systemRuntime,
  };
  return Object.freeze(hideApiKey(resolved));
}

/**
 * Makes `JSON.stringify` and `util.inspect` of the resolved options show `apiKey: '[REDACTED]'`
 * (the key stays an ordinary property for the code that needs it). Both hooks are non-enumerable,
 * so spreading the options copies neither.
 */
function hideApiKey(resolved: ResolvedPaymentsOptions): ResolvedPaymentsOptions {
  const redacted = (): Record<string, unknown> => ({ ...resolved, apiKey: '[REDACTED]' });
  Object.defineProperty(resolved, 'toJSON', { value: redacted, enumerable: false });
  Object.defineProperty(resolved, Symbol.for('nodejs.util.inspect.custom'), {
    value: (depth: number, inspectOptions: object, inspect: (value: unknown, options: object) => string) =>
      inspect(redacted(), { ...inspectOptions, depth }),
    enumerable: false,
  });
  return resolved;
}
