// Types only: @nestjs/microservices and amqplib are optional peers, loaded when the server is created.
import type { CustomTransportStrategy, MessageHandler } from '@nestjs/microservices';
import type { Channel } from 'amqplib';
import { assertRabbitMqTopology, workQueueOptions } from './rabbitmq-topology.js';
import { resolveRabbitMqOptions, type PaymentsRabbitMqOptions } from './rabbitmq.options.js';

/**
 * Nest's own RabbitMQ transport (`ServerRMQ` of `@nestjs/microservices`, on `amqp-connection-manager`),
 * set up for webhook deliveries: manual acknowledgement, the prefetch given, the work queue with its
 * retry and dead-letter queues declared before it consumes, and each message handed as it came (its raw
 * bytes are never parsed by the transport) to `PaymentsRabbitMqModule`'s handler. Pass it as the
 * microservice's `strategy`, with the same options as the module.
 *
 * @example
 * const options = { urls: [process.env.AMQP_URL!], queue: 'payments.webhooks' };
 * const app = await NestFactory.createMicroservice(AppModule, { strategy: await createPaymentsRabbitMqServer(options) });
 * // AppModule imports PaymentsModule.forRoot({ ..., webhooks }) and PaymentsRabbitMqModule.register(options)
 */
export async function createPaymentsRabbitMqServer(options: PaymentsRabbitMqOptions): Promise<CustomTransportStrategy> {
  const resolved = resolveRabbitMqOptions(options, 'createPaymentsRabbitMqServer');
  const { ServerRMQ, RmqContext } = await import('@nestjs/microservices');
  const packet = Object.freeze({ pattern: resolved.pattern, data: undefined });

  class PaymentsRabbitMqServer extends ServerRMQ {
    /** The queue's handler, looked up once (Nest's lookup JSON-parses the pattern, which throws for a plain one). */
    private handler: MessageHandler | null = null;

    constructor() {
      super({
        urls: resolved.urls,
        queue: resolved.queue,
        noAck: false,
        prefetchCount: resolved.prefetchCount,
        queueOptions: workQueueOptions(resolved),
      });
    }

    /** The retry and dead-letter queues exist before the work queue refuses its first message into them. */
    override async setupChannel(channel: Channel, callback: () => void): Promise<void> {
      await assertRabbitMqTopology(channel, resolved, false);
      return super.setupChannel(channel, callback);
    }

    override getHandlerByPattern(pattern: string): MessageHandler | null {
      if (pattern !== resolved.pattern) return super.getHandlerByPattern(pattern);
      this.handler ??= super.getHandlerByPattern(pattern);
      return this.handler;
    }

    /**
     * Every message of the queue is a delivery for this queue's handler: no JSON parse of the content (the
     * receiver verifies the bytes as they are) and no pattern read from it (a message says nothing to trust).
     */
    override async handleMessage(message: Record<string, unknown> | null, channel: unknown): Promise<void> {
      if (message === null || message === undefined) return;
      const context = new RmqContext([message, channel, resolved.pattern]);
      return this.handleEvent(resolved.pattern, packet, context);
    }
  }
  return new PaymentsRabbitMqServer();
}
