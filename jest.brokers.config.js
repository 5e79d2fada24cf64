import { base } from './jest.base.js';

/**
 * `npm run test:brokers`: the broker shapes against real engines, RabbitMQ at AMQP_URL (default
 * amqp://guest:guest@127.0.0.1:5672) and NATS JetStream at NATS_URL (default nats://127.0.0.1:4222);
 * `.ci/run` starts both when they are down.
 */
export default {
  ...base,
  testMatch: ['<rootDir>/test/integration/brokers/**/*.spec.ts'],
  testTimeout: 60000,
};
