import { fail, isObject, kind } from '../../errors/payments-option.checks.js';
import type { PaymentsBrokerRetryOptions } from '../broker-retry.options.js';

/** Options of the NATS JetStream consumer (`PaymentsNatsModule.register`). */
export interface PaymentsNatsOptions {
  /** The NATS servers, e.g. `nats://127.0.0.1:4222`. */
  servers: string | string[];
  /** The work stream (created when missing, work-queue retention). Default 'PAYMENTS_WEBHOOKS'. */
  stream?: string;
  /** The subject the forwarder publishes to. Default 'payments.webhooks'. Its dead letters go to `<subject>.dead`. */
  subject?: string;
  /** The durable consumer's name: every instance of the app shares it (one delivery each). Default 'payments-webhooks'. */
  durable?: string;
  /** Messages handled at once. Default 32. */
  prefetchCount?: number;
  /** How long a delivery may stay unacknowledged before JetStream delivers it again, in ms. Default 60000. */
  ackWaitMs?: number;
  retry?: PaymentsBrokerRetryOptions;
  /** The `PaymentsModule` instance whose receiver runs the deliveries. Default: the unnamed one. */
  instance?: string;
}

/** The options after their checks, defaults filled in. */
export interface ResolvedNatsOptions {
  servers: string[];
  stream: string;
  deadStream: string;
  subject: string;
  deadSubject: string;
  durable: string;
  prefetchCount: number;
  ackWaitMs: number;
  delayMs: number;
  maxAttempts: number;
  instance: string | undefined;
}

/** The dead-letter stream and subject of a work stream and subject. */
export function natsDeadLetters(stream: string, subject: string): { deadStream: string; deadSubject: string } {
  return { deadStream: `${stream}_DEAD`, deadSubject: `${subject}.dead` };
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const SUBJECT = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** Checks the options once, at boot: each bad value fails with its name and the fix. */
export function resolveNatsOptions(options: PaymentsNatsOptions, called: string): ResolvedNatsOptions {
  if (!isObject(options))
    return fail(`${called}(options)`, `must be an object, got ${kind(options)}`, 'pass { servers }');
  const servers = typeof options.servers === 'string' ? [options.servers] : options.servers;
  if (
    !Array.isArray(servers) ||
    servers.length === 0 ||
    servers.some((server) => typeof server !== 'string' || server === '')
  ) {
    fail(`${called}({ servers })`, 'must be one or more server addresses', "pass e.g. 'nats://127.0.0.1:4222'");
  }
  const stream = options.stream ?? 'PAYMENTS_WEBHOOKS';
  if (typeof stream !== 'string' || !NAME.test(stream)) {
    fail(
      `${called}({ stream })`,
      'must be a stream name of letters, digits, "_" or "-"',
      "pass e.g. 'PAYMENTS_WEBHOOKS'",
    );
  }
  const subject = options.subject ?? 'payments.webhooks';
  if (typeof subject !== 'string' || !SUBJECT.test(subject)) {
    fail(`${called}({ subject })`, 'must be a subject without wildcards', "pass e.g. 'payments.webhooks'");
  }
  const durable = options.durable ?? 'payments-webhooks';
  if (typeof durable !== 'string' || !NAME.test(durable)) {
    fail(
      `${called}({ durable })`,
      'must be a consumer name of letters, digits, "_" or "-"',
      "pass e.g. 'payments-webhooks'",
    );
  }
  const retry = options.retry ?? {};
  if (!isObject(retry))
    fail(`${called}({ retry })`, `must be an object, got ${kind(retry)}`, 'pass { delayMs, maxAttempts }');
  return {
    servers,
    stream,
    subject,
    ...natsDeadLetters(stream, subject),
    durable,
    prefetchCount: whole(options.prefetchCount, 32, 1, `${called}({ prefetchCount })`),
    ackWaitMs: whole(options.ackWaitMs, 60_000, 100, `${called}({ ackWaitMs })`),
    delayMs: whole(retry.delayMs, 30_000, 1, `${called}({ retry: { delayMs } })`),
    maxAttempts: whole(retry.maxAttempts, 5, 1, `${called}({ retry: { maxAttempts } })`),
    instance: options.instance,
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
