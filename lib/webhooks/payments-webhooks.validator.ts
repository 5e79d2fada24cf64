import {
  DEFAULT_PAYMENTS_INSTANCE,
  DEFAULT_RETENTION_SECONDS,
  DEFAULT_WEBHOOKS_PATH,
} from '../core/payments.defaults.js';
import { isDefaultPaymentsInstance, paymentsInstanceKeyPrefix } from '../core/payments.instance.js';
import { isUuid } from '../core/payments.uuid.js';
import { fail, isObject, kind, limit } from '../errors/payments-option.checks.js';
import type { ResolvedWebhooksOptions } from './contracts/payments-webhooks.options.js';
import { resolvePluginValues } from './payments-webhooks.plugins.js';
import { assertMemoryStoreAllowed } from './stores/memory-store-production.check.js';

/**
 * Validates `webhooks` (the receiver's options) and fills in the defaults. `instance` names the
 * module instance, for per-instance defaults (the queue name).
 */
export function validateWebhooksOptions(
  raw: unknown,
  environment: 'sandbox' | 'production',
  instance: string = DEFAULT_PAYMENTS_INSTANCE,
): false | ResolvedWebhooksOptions {
  if (raw === false) return false;
  if (raw === undefined) {
    return fail(
      'webhooks',
      'is missing',
      'pass `webhooks: { verifier: standardWebhooks({...}) | hmacScheme({...}) }` to receive webhooks, or `webhooks: false` to register no route',
    );
  }
  if (!isObject(raw)) {
    return fail(
      'webhooks',
      `must be an object or false, got ${kind(raw)}`,
      'pass `webhooks: { verifier }` or `webhooks: false`',
    );
  }
  const verifier = raw.verifier;
  if (!isObject(verifier) || typeof verifier.verify !== 'function') {
    return fail(
      'webhooks.verifier',
      'is required: the service reference shows no signature scheme, so there is no default',
      'pass the scheme the service gave you, `standardWebhooks({ secrets })` or `hmacScheme({ secrets, header, ... })`, or an object with a `verify(input)` method',
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
      fail(
        'webhooks.endpointIds',
        'must be a non-empty array of webhook endpoint ids',
        'pass the UUIDs of your endpoints, or omit it to accept any',
      );
    }
    for (const id of raw.endpointIds as unknown[]) {
      if (!isUuid(id)) {
        fail(
          'webhooks.endpointIds',
          'contains a value that is not a UUID',
          'pass the `id` of each WebhookEndpoint (a UUID)',
        );
      }
    }
    endpointIds = new Set((raw.endpointIds as string[]).map((id) => id.toLowerCase()));
  }
  const store = raw.store;
  if (
    store !== undefined &&
    (!isObject(store) ||
      typeof store.claim !== 'function' ||
      typeof store.complete !== 'function' ||
      typeof store.release !== 'function')
  ) {
    fail(
      'webhooks.store',
      'must implement IdempotencyStore (claim, complete, release)',
      'pass `new MemoryIdempotencyStore()`, `new RedisIdempotencyStore(redis)` or omit it',
    );
  }
  assertMemoryStoreAllowed(raw);
  if (raw.logDeliveries !== undefined && typeof raw.logDeliveries !== 'boolean') {
    fail(
      'webhooks.logDeliveries',
      `must be a boolean, got ${kind(raw.logDeliveries)}`,
      'pass true for one line per delivery, or omit it (false)',
    );
  }
  if (raw.requireHttps !== undefined && typeof raw.requireHttps !== 'boolean') {
    fail(
      'webhooks.requireHttps',
      `must be a boolean, got ${kind(raw.requireHttps)}`,
      'pass true or false, or omit it (true in production)',
    );
  }
  if (raw.currentState !== undefined && typeof raw.currentState !== 'boolean') {
    fail(
      'webhooks.currentState',
      `must be a boolean, got ${kind(raw.currentState)}`,
      'pass true to run every intent handler on the current state of its intent (or opt handlers in one by one with @OnPaymentEvent(type, { current: true })), or omit it (false)',
    );
  }

  return {
    storeKeyPrefix: paymentsInstanceKeyPrefix(instance),
    ...(isDefaultPaymentsInstance(instance) ? {} : { instance }),
    path,
    verifier: verifier as unknown as ResolvedWebhooksOptions['verifier'],
    endpointIds,
    store: store as ResolvedWebhooksOptions['store'],
    logDeliveries: raw.logDeliveries === true,
    claimTtlSeconds: limit(raw.claimTtlSeconds, 'webhooks.claimTtlSeconds', 300, { min: 1 }),
    retentionSeconds: limit(raw.retentionSeconds, 'webhooks.retentionSeconds', DEFAULT_RETENTION_SECONDS, { min: 1 }),
    maxBodyBytes: limit(raw.maxBodyBytes, 'webhooks.maxBodyBytes', 1_048_576, { min: 1 }),
    bodyTimeoutMs: limit(raw.bodyTimeoutMs, 'webhooks.bodyTimeoutMs', 10_000, { min: 1 }),
    requireHttps: (raw.requireHttps as boolean | undefined) ?? environment === 'production',
    currentState: raw.currentState === true,
    // Each built-in plug-in's value, checked by its feature (processing, deliveryListener, transactions, reconcile).
    ...resolvePluginValues(raw, { environment, instance }),
  } as ResolvedWebhooksOptions;
}
