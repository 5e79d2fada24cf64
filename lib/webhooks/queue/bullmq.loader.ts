import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import type { ResolvedPaymentsQueueOptions } from '../contracts/payments-queue.options.js';
import { usesKeyPrefix } from './queue-connection.util.js';

/**
 * Loads the optional peer bullmq (for the producer and the worker alike) and refuses a connection
 * BullMQ cannot use, with a `PaymentsConfigurationError` naming the fix.
 */
export async function loadBullmq(
  settings: Pick<ResolvedPaymentsQueueOptions, 'connection'>,
): Promise<typeof import('bullmq')> {
  const bullmq = await import('bullmq').catch((error: unknown) => {
    throw new PaymentsConfigurationError(
      'webhooks.processing.queue',
      `needs the optional peer dependency bullmq, which could not be loaded (${error instanceof Error ? error.message : 'unknown error'})`,
      'run `npm install bullmq ioredis`, or use processing: inline',
    );
  });
  if (usesKeyPrefix(settings.connection)) {
    throw new PaymentsConfigurationError(
      'webhooks.processing.queue.connection',
      'uses an ioredis keyPrefix, which BullMQ does not support',
      'pass a client or options without keyPrefix (the queue keeps its keys under bull:<name>:)',
    );
  }
  return bullmq;
}
