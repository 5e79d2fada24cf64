/*
 * `nestjs-payments/rabbitmq`: webhook deliveries through RabbitMQ. The consumer runs on Nest's own
 * transport (`@nestjs/microservices`), the publisher is for the edge (`createPaymentsForwarder`);
 * amqplib, amqp-connection-manager and @nestjs/microservices are optional peers, loaded when used.
 */
export { createPaymentsRabbitMqServer } from './payments-rabbitmq.server.js';
export { PaymentsRabbitMqModule } from './payments-rabbitmq.module.js';
export { RabbitMqDeliveryConsumer, type RabbitMqDeliveryFate } from './rabbitmq-delivery.consumer.js';
export { rabbitMqPublisher, type RabbitMqPublisherOptions } from './rabbitmq.publisher.js';
export { replayRabbitMqDeadLetters, type RabbitMqReplayOptions } from './rabbitmq-dead-letters.js';
export { rabbitMqQueues, type PaymentsBrokerRetryOptions, type PaymentsRabbitMqOptions } from './rabbitmq.options.js';
