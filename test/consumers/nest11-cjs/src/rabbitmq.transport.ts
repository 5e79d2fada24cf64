import type { CustomTransportStrategy } from '@nestjs/microservices';
import { createPaymentsRabbitMqServer } from 'nestjs-payments/rabbitmq';

/**
 * A Nest 11 shop that takes webhooks from RabbitMQ installs @nestjs/microservices 11 beside the package
 * (npm refused the tarball while its peer range named 12 only): `nest build` compiles this against it.
 * The app does not start the transport (this matrix has no broker); test/integration/brokers runs it.
 */
export function paymentsTransport(url: string): Promise<CustomTransportStrategy> {
  return createPaymentsRabbitMqServer({ urls: [url], queue: 'payments.webhooks' });
}
