import { DEFAULT_PAYMENTS_INSTANCE, DEFAULT_QUEUE_NAME } from '../../core/payments.defaults.js';
import { fail, isObject, limit } from '../../errors/payments-option.checks.js';
import type { ResolvedPaymentsQueueOptions } from '../contracts/payments-queue.options.js';
import { isClusterConnection } from './queue-connection.util.js';

/** BullMQ's own default key prefix. */
const DEFAULT_QUEUE_PREFIX = 'bull';

/** A Redis Cluster hash tag: the part between the first '{' and the next '}', non-empty. */
const HASH_TAG_RE = /\{[^}]+\}/;

/** `'payments-webhooks'` for the unnamed instance, `'payments-webhooks-eu'` for the instance 'eu'. */
export const defaultQueueName = (instance: string = DEFAULT_PAYMENTS_INSTANCE): string =>
  instance === DEFAULT_PAYMENTS_INSTANCE ? DEFAULT_QUEUE_NAME : `${DEFAULT_QUEUE_NAME}-${instance}`;

/**
 * Validates `webhooks.processing` when it is not 'inline' (the queue part's options) and fills in the
 * defaults. The queue name defaults per instance, so two instances never share a queue by accident.
 */
export function validateProcessingQueue(
  p: unknown,
  instance: string = DEFAULT_PAYMENTS_INSTANCE,
): { queue: ResolvedPaymentsQueueOptions } {
  if (!isObject(p) || !isObject(p.queue)) {
    fail(
      'webhooks.processing',
      "must be 'inline' or { queue: { connection } }",
      "pass 'inline' (default) or { queue: { connection: redisClientOrOptions } }",
    );
  }
  const q = (p as { queue: Record<string, unknown> }).queue;
  if (!isObject(q.connection)) {
    fail('webhooks.processing.queue.connection', 'is required', 'pass an ioredis client or ioredis connection options');
  }
  if (q.name !== undefined && (typeof q.name !== 'string' || q.name === '' || q.name.includes(':'))) {
    fail(
      'webhooks.processing.queue.name',
      'must be a non-empty string without ":"',
      "pass a name such as 'payments-webhooks'",
    );
  }
  const backoff = q.backoff;
  if (backoff !== undefined && (!isObject(backoff) || (backoff.type !== 'exponential' && backoff.type !== 'fixed'))) {
    fail(
      'webhooks.processing.queue.backoff',
      "must be { type: 'exponential' | 'fixed', delay }",
      "pass { type: 'exponential', delay: 1000 }",
    );
  }
  if (q.prefix !== undefined && (typeof q.prefix !== 'string' || q.prefix === '' || /\s/.test(q.prefix))) {
    fail(
      'webhooks.processing.queue.prefix',
      'must be a non-empty string without spaces',
      "pass a prefix such as 'bull' (default), or '{payments}' on Redis Cluster",
    );
  }
  const prefix = (q.prefix as string | undefined) ?? DEFAULT_QUEUE_PREFIX;
  const name = (q.name as string | undefined) ?? defaultQueueName(instance);
  if (isClusterConnection(q.connection as object) && !HASH_TAG_RE.test(prefix) && !HASH_TAG_RE.test(name)) {
    fail(
      'webhooks.processing.queue.prefix',
      `is '${prefix}', which has no {hash tag}, while the connection is a Redis Cluster: BullMQ's scripts touch several keys of the queue at once, and the cluster refuses them unless they share one slot`,
      "pass a hash-tagged prefix such as prefix: '{payments}' (each queue of the cluster then lives in that tag's slot)",
    );
  }
  if (q.worker !== undefined && typeof q.worker !== 'boolean') {
    fail(
      'webhooks.processing.queue.worker',
      'must be a boolean',
      'pass true to run a worker in this instance, false to only enqueue',
    );
  }
  return {
    queue: {
      connection: q.connection as object,
      name,
      prefix,
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

/** Checks `webhooks.processing`: `'inline'` when absent or `'inline'`, else the queue's options, filled in. */
export function resolveProcessing(
  raw: unknown,
  receiver: { instance: string },
): 'inline' | { queue: ResolvedPaymentsQueueOptions } {
  return raw === undefined || raw === 'inline' ? 'inline' : validateProcessingQueue(raw, receiver.instance);
}
