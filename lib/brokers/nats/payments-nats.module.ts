import { Module, type DynamicModule } from '@nestjs/common';
import { getPaymentsWebhookReceiverToken, type PaymentsWebhookReceiver } from '../../webhooks/index.js';
import { NatsDeliveryConsumer } from './nats-delivery.consumer.js';
import { resolveNatsOptions, type PaymentsNatsOptions } from './nats.options.js';

/**
 * The NATS JetStream shape: a durable consumer of the work stream that runs each message through the
 * instance's `PaymentsWebhookReceiver` (`NatsDeliveryConsumer`), started with the app and stopped with it.
 * Streams and the consumer are created when missing. `nats` is an optional peer, loaded at boot.
 *
 * @example
 * imports: [PaymentsModule.forRoot({ ..., webhooks: { verifier } }), PaymentsNatsModule.register({ servers: process.env.NATS_URL! })]
 */
@Module({})
export class PaymentsNatsModule {
  static register(options: PaymentsNatsOptions): DynamicModule {
    const resolved = resolveNatsOptions(options, 'PaymentsNatsModule.register');
    return {
      module: PaymentsNatsModule,
      providers: [
        {
          provide: NatsDeliveryConsumer,
          useFactory: (receiver: PaymentsWebhookReceiver) => new NatsDeliveryConsumer(receiver, resolved),
          inject: [getPaymentsWebhookReceiverToken(resolved.instance)],
        },
      ],
      exports: [NatsDeliveryConsumer],
    };
  }
}
