// Types only: amqplib is an optional peer, loaded by Nest's transport or by the functions that connect.
import type { Channel, ConfirmChannel, Message, Options } from 'amqplib';
import type { ResolvedRabbitMqOptions } from './rabbitmq.options.js';

/**
 * The work queue: a message refused there (`nack`, no requeue) is dead-lettered by the broker itself to
 * the retry queue, atomically with the refusal.
 */
export function workQueueOptions(options: Pick<ResolvedRabbitMqOptions, 'retryQueue'>): Options.AssertQueue {
  return {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': options.retryQueue },
  };
}

/** The retry queue: a message waits `delayMs` (the queue's TTL), then expires back into the work queue. */
export function retryQueueOptions(options: Pick<ResolvedRabbitMqOptions, 'queue' | 'delayMs'>): Options.AssertQueue {
  return {
    durable: true,
    arguments: {
      'x-message-ttl': options.delayMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': options.queue,
    },
  };
}

/** Declares the three queues (idempotent; a queue declared before with other arguments fails with PRECONDITION_FAILED). */
export async function assertRabbitMqTopology(
  channel: Pick<Channel, 'assertQueue'>,
  options: Pick<ResolvedRabbitMqOptions, 'queue' | 'retryQueue' | 'deadQueue' | 'delayMs'>,
  work = true,
): Promise<void> {
  await channel.assertQueue(options.retryQueue, retryQueueOptions(options));
  await channel.assertQueue(options.deadQueue, { durable: true });
  if (work) await channel.assertQueue(options.queue, workQueueOptions(options));
}

/** Header names the broker or this package adds: never handed to the receiver, never replayed. */
export const isBrokerHeader = (name: string): boolean =>
  name === 'x-death' ||
  name.startsWith('x-first-death-') ||
  name.startsWith('x-last-death-') ||
  name.startsWith('x-payments-');

/**
 * The headers the service sent (strings, as the forwarder published them), without what the broker added.
 * The same object when it holds nothing else (a first delivery): no copy per message.
 */
export function serviceHeaders(headers: Message['properties']['headers']): Record<string, string> {
  if (headers === undefined || headers === null) return {};
  let clean = true;
  for (const name in headers) {
    if (typeof headers[name] !== 'string' || isBrokerHeader(name)) {
      clean = false;
      break;
    }
  }
  if (clean) return headers as Record<string, string>;
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value: unknown = headers[name];
    if (typeof value === 'string' && !isBrokerHeader(name)) out[name.toLowerCase()] = value;
  }
  return out;
}

/**
 * How many times the message was refused from the work queue and came back through the retry queue: the
 * broker's own count in `x-death` (reason `rejected`, queue `queue`).
 */
export function rejectionsOf(message: Pick<Message, 'properties'>, queue: string): number {
  const deaths: unknown = message.properties.headers?.['x-death'];
  if (!Array.isArray(deaths)) return 0;
  let count = 0;
  for (const death of deaths as { queue?: unknown; reason?: unknown; count?: unknown }[]) {
    if (death?.queue === queue && death.reason === 'rejected' && typeof death.count === 'number') count += death.count;
  }
  return count;
}

/** Publishes on a confirm channel and resolves once the broker confirmed the message (rejects when it refused it). */
export function sendConfirmed(
  channel: ConfirmChannel,
  queue: string,
  content: Buffer,
  options: Options.Publish,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    try {
      channel.sendToQueue(queue, content, options, (error: unknown) => (error ? reject(error) : resolve()));
    } catch (error) {
      reject(error);
    }
  });
}
