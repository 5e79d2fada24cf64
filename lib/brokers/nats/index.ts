/*
 * `nestjs-payments/nats`: webhook deliveries through NATS JetStream: a durable consumer in the Nest app
 * (`PaymentsNatsModule`), a publisher for the edge (`createPaymentsForwarder`), the dead-letter replay.
 * `nats` is an optional peer, loaded when used.
 */
export { PaymentsNatsModule } from './payments-nats.module.js';
export { NatsDeliveryConsumer, type NatsDeliveryFate } from './nats-delivery.consumer.js';
export { natsPublisher, type NatsPublisherOptions } from './nats.publisher.js';
export { replayNatsDeadLetters, type NatsReplayOptions } from './nats-dead-letters.js';
export { natsDeadLetters, type PaymentsNatsOptions } from './nats.options.js';
export type { PaymentsBrokerRetryOptions } from '../broker-retry.options.js';
