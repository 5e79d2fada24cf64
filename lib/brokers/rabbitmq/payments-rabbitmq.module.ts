import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
// Types only: @nestjs/microservices and amqplib are optional peers, loaded when the module is registered.
import type { RmqContext } from '@nestjs/microservices';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { getPaymentsWebhookReceiverToken, type PaymentsWebhookReceiver } from '../../webhooks/index.js';
import { RabbitMqDeliveryConsumer, type RabbitMqDeliveryFate } from './rabbitmq-delivery.consumer.js';
import { resolveRabbitMqOptions, type PaymentsRabbitMqOptions } from './rabbitmq.options.js';

/**
 * The consumer side of the RabbitMQ shape: the handler of `createPaymentsRabbitMqServer`'s messages (an
 * `@EventPattern` of its queue), which runs each through the instance's `PaymentsWebhookReceiver` and
 * settles it by the receipt (`RabbitMqDeliveryConsumer`: acknowledged, retried later, or parked).
 * Asynchronous because `@nestjs/microservices` is loaded here, when used: give the promise to `imports`.
 *
 * @example
 * imports: [PaymentsModule.forRoot({ ..., webhooks: { verifier } }), PaymentsRabbitMqModule.register({ urls, queue: 'payments.webhooks' })]
 */
@Module({})
export class PaymentsRabbitMqModule {
  static async register(options: PaymentsRabbitMqOptions): Promise<DynamicModule> {
    const resolved = resolveRabbitMqOptions(options, 'PaymentsRabbitMqModule.register');
    const { Ctx, EventPattern, Transport } = await import('@nestjs/microservices');
    const CONSUMER = Symbol(`PaymentsRabbitMqConsumer:${resolved.queue}`);

    @Controller()
    class PaymentsRabbitMqController {
      constructor(@Inject(CONSUMER) private readonly consumer: RabbitMqDeliveryConsumer) {}

      @EventPattern(resolved.pattern, Transport.RMQ)
      consume(_data: unknown, @Ctx() ctx: unknown): Promise<RabbitMqDeliveryFate> {
        const context = ctx as RmqContext;
        return this.consumer.consume(context.getMessage() as ConsumeMessage, context.getChannelRef() as ConfirmChannel);
      }
    }

    return {
      module: PaymentsRabbitMqModule,
      controllers: [PaymentsRabbitMqController],
      providers: [
        {
          provide: CONSUMER,
          useFactory: (receiver: PaymentsWebhookReceiver) => new RabbitMqDeliveryConsumer(receiver, resolved),
          inject: [getPaymentsWebhookReceiverToken(resolved.instance)],
        },
      ],
    };
  }
}
