// Types only: amqplib is an optional peer, loaded on the first publish.
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { fail, isObject, kind } from '../../errors/payments-option.checks.js';
import type { PaymentsDeliveryPublisher } from '../../serverless/payments-forwarder.js';
import type { PaymentsForwardedDelivery } from '../../serverless/serverless-http.event.js';
import { sendConfirmed } from './rabbitmq-topology.js';

/** Options of `rabbitMqPublisher`. */
export interface RabbitMqPublisherOptions {
  /** The broker, e.g. `amqp://user:pass@host:5672/vhost`. */
  url: string;
  /** The work queue the consumer reads (`PaymentsRabbitMqOptions.queue`); it must exist (the consumer declares it). */
  queue: string;
}

/**
 * Publishes forwarded deliveries to the consumer's work queue: the body as the message's content, the
 * headers as its headers, persistent, on a confirm channel; `publish` resolves once the broker confirmed
 * the message. Connects on the first publish (amqplib, loaded then), checks the queue exists (a publish
 * into a missing queue would be dropped), and connects again after the connection was lost.
 *
 * @example createPaymentsForwarder({ verifier, publisher: rabbitMqPublisher({ url: process.env.AMQP_URL!, queue: 'payments.webhooks' }) })
 */
export function rabbitMqPublisher(options: RabbitMqPublisherOptions): PaymentsDeliveryPublisher {
  if (!isObject(options))
    fail('rabbitMqPublisher(options)', `must be an object, got ${kind(options)}`, 'pass { url, queue }');
  if (typeof options.url !== 'string' || !/^amqps?:\/\//.test(options.url)) {
    fail(
      'rabbitMqPublisher({ url })',
      'must be an amqp:// or amqps:// address',
      "pass e.g. 'amqp://guest:guest@127.0.0.1:5672'",
    );
  }
  if (typeof options.queue !== 'string' || options.queue === '') {
    fail('rabbitMqPublisher({ queue })', "must be the consumer's work queue", "pass e.g. 'payments.webhooks'");
  }
  let open: Promise<{ connection: ChannelModel; channel: ConfirmChannel }> | undefined;

  const connect = (): Promise<{ connection: ChannelModel; channel: ConfirmChannel }> => {
    open ??= (async () => {
      const amqp = await import('amqplib');
      const connection = await amqp.connect(options.url);
      const forget = (): void => {
        open = undefined;
      };
      connection.on('close', forget);
      connection.on('error', forget);
      try {
        const channel = await connection.createConfirmChannel();
        channel.on('close', forget);
        channel.on('error', forget);
        await channel.checkQueue(options.queue);
        return { connection, channel };
      } catch (error) {
        await connection.close().catch(() => undefined);
        throw error;
      }
    })();
    open.catch(() => (open = undefined));
    return open;
  };

  return {
    async publish(delivery: PaymentsForwardedDelivery): Promise<void> {
      const { channel } = await connect();
      await sendConfirmed(channel, options.queue, delivery.body, {
        headers: delivery.headers,
        persistent: true,
        contentType: delivery.headers['content-type'] ?? 'application/json',
      });
    },
    async close(): Promise<void> {
      const current = open;
      open = undefined;
      if (current) await (await current).connection.close().catch(() => undefined);
    },
  };
}
