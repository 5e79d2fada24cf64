import { fail, isObject, kind } from '../../errors/payments-option.checks.js';
import type { PaymentsBrokerRetryOptions } from '../broker-retry.options.js';

export type { PaymentsBrokerRetryOptions } from '../broker-retry.options.js';

/** Options of the RabbitMQ consumer (`createPaymentsRabbitMqServer` and `PaymentsRabbitMqModule.register`: give both the same). */
export interface PaymentsRabbitMqOptions {
  /** The broker, e.g. `amqp://user:pass@host:5672/vhost` (several: tried in turn). */
  urls: string | string[];
  /** The work queue the forwarder publishes to. Its retry and dead-letter queues are `<queue>.retry` and `<queue>.dead`. */
  queue: string;
  /** Messages handled at once (AMQP prefetch of the consumer's channel). Default 32. */
  prefetchCount?: number;
  retry?: PaymentsBrokerRetryOptions;
  /** The `PaymentsModule` instance whose receiver runs the deliveries (`forRoot({ name })`). Default: the unnamed one. */
  instance?: string;
}

/** The options after their checks, defaults filled in. */
export interface ResolvedRabbitMqOptions {
  urls: string[];
  queue: string;
  retryQueue: string;
  deadQueue: string;
  prefetchCount: number;
  delayMs: number;
  maxAttempts: number;
  instance: string | undefined;
  /** The Nest message pattern the server gives this queue's messages (one per queue). */
  pattern: string;
}

/** The three queues of one work queue: where messages wait, wait again, and are parked. */
export function rabbitMqQueues(queue: string): { queue: string; retryQueue: string; deadQueue: string } {
  return { queue, retryQueue: `${queue}.retry`, deadQueue: `${queue}.dead` };
}

/** Checks the options once, at boot: each bad value fails with its name and the fix. */
export function resolveRabbitMqOptions(options: PaymentsRabbitMqOptions, called: string): ResolvedRabbitMqOptions {
  if (!isObject(options))
    return fail(`${called}(options)`, `must be an object, got ${kind(options)}`, 'pass { urls, queue }');
  const urls = typeof options.urls === 'string' ? [options.urls] : options.urls;
  if (
    !Array.isArray(urls) ||
    urls.length === 0 ||
    urls.some((url) => typeof url !== 'string' || !/^amqps?:\/\//.test(url))
  ) {
    fail(
      `${called}({ urls })`,
      'must be one or more amqp:// or amqps:// addresses',
      "pass e.g. 'amqp://guest:guest@127.0.0.1:5672'",
    );
  }
  if (typeof options.queue !== 'string' || !/^[\w.:-]{1,200}$/.test(options.queue)) {
    fail(
      `${called}({ queue })`,
      'must be a queue name of letters, digits, ".", ":", "_" or "-"',
      "pass e.g. 'payments.webhooks'",
    );
  }
  const prefetchCount = whole(options.prefetchCount, 32, 1, `${called}({ prefetchCount })`);
  const retry = options.retry ?? {};
  if (!isObject(retry))
    fail(`${called}({ retry })`, `must be an object, got ${kind(retry)}`, 'pass { delayMs, maxAttempts }');
  const delayMs = whole(retry.delayMs, 30_000, 1, `${called}({ retry: { delayMs } })`);
  const maxAttempts = whole(retry.maxAttempts, 5, 1, `${called}({ retry: { maxAttempts } })`);
  if (options.instance !== undefined && (typeof options.instance !== 'string' || options.instance === '')) {
    fail(
      `${called}({ instance })`,
      'must be the name of a PaymentsModule instance',
      "pass e.g. 'eu', or leave it out for the unnamed one",
    );
  }
  return {
    urls,
    ...rabbitMqQueues(options.queue),
    prefetchCount,
    delayMs,
    maxAttempts,
    instance: options.instance,
    pattern: `nestjs-payments:webhooks:${options.queue}`,
  };
}

function whole(value: unknown, fallback: number, min: number, option: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    fail(
      option,
      `must be a whole number >= ${min}, got ${kind(value)}`,
      `pass an integer >= ${min} (default ${fallback})`,
    );
  }
  return value as number;
}
