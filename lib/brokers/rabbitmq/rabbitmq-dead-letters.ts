// Types only: amqplib is an optional peer, loaded here when used.
import type { ConfirmChannel } from 'amqplib';
import { isBrokerHeader, sendConfirmed } from './rabbitmq-topology.js';
import { rabbitMqQueues } from './rabbitmq.options.js';

/** Options of `replayRabbitMqDeadLetters`. */
export interface RabbitMqReplayOptions {
  /** The broker. */
  url: string;
  /** The work queue (`PaymentsRabbitMqOptions.queue`): its `<queue>.dead` is emptied into it. */
  queue: string;
  /** At most this many messages (default: every message there when the replay starts). */
  limit?: number;
  /** Replays only the messages this returns true for (the others stay parked); it sees the reason and the headers. */
  filter?: (parked: { reason: string | undefined; headers: Record<string, unknown> }) => boolean;
}

/**
 * Moves parked messages from `<queue>.dead` back to the work queue, once the cause is fixed (a handler
 * deployed again, a tolerance raised): each one is republished with the service's headers only (the
 * reason and the broker's counts dropped, so it gets its full number of attempts), confirmed, then removed
 * from the dead-letter queue. A message the receiver already handled is a duplicate there: nothing runs twice.
 * Returns how many were moved.
 *
 * @example await replayRabbitMqDeadLetters({ url: process.env.AMQP_URL!, queue: 'payments.webhooks' })
 */
export async function replayRabbitMqDeadLetters(options: RabbitMqReplayOptions): Promise<number> {
  const { queue, deadQueue } = rabbitMqQueues(options.queue);
  const amqp = await import('amqplib');
  const connection = await amqp.connect(options.url);
  try {
    const channel: ConfirmChannel = await connection.createConfirmChannel();
    const { messageCount } = await channel.checkQueue(deadQueue);
    const limit = Math.min(options.limit ?? messageCount, messageCount);
    let moved = 0;
    const kept = [];
    for (let seen = 0; seen < limit; seen += 1) {
      const message = await channel.get(deadQueue, { noAck: false });
      if (message === false) break;
      const all = message.properties.headers ?? {};
      const reason = typeof all['x-payments-reason'] === 'string' ? all['x-payments-reason'] : undefined;
      if (options.filter && !options.filter({ reason, headers: all })) {
        kept.push(message);
        continue;
      }
      const headers: Record<string, unknown> = {};
      for (const name in all) if (!isBrokerHeader(name)) headers[name] = all[name];
      await sendConfirmed(channel, queue, message.content, {
        headers,
        persistent: true,
        contentType: message.properties.contentType as string | undefined,
        messageId: message.properties.messageId as string | undefined,
      });
      channel.ack(message);
      moved += 1;
    }
    // The ones the filter kept go back to the dead-letter queue, in their order.
    for (const message of kept) channel.nack(message, false, true);
    await channel.close();
    return moved;
  } finally {
    await connection.close().catch(() => undefined);
  }
}
