import { Logger } from '@nestjs/common';
// Types only: amqplib is an optional peer (Nest's transport loads it).
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { PaymentsWebhookReceipt, PaymentsWebhookReceiver } from '../../webhooks/index.js';
import { WebhookLogSampler } from '../../webhooks/log/webhook-log.sampler.js';
import { rejectionsOf, sendConfirmed, serviceHeaders } from './rabbitmq-topology.js';
import type { ResolvedRabbitMqOptions } from './rabbitmq.options.js';

/** What became of one message: acknowledged, sent to wait in the retry queue, or parked in the dead-letter queue. */
export type RabbitMqDeliveryFate = 'acked' | 'retried' | 'parked' | 'unsettled';

/**
 * One message of the work queue through the instance's receiver, then settled by its receipt:
 * - handled, duplicate, unhandled (any 2xx): acknowledged;
 * - refused (forged, malformed, too large, stale): parked in `<queue>.dead` with the reason, then
 *   acknowledged: never handled, never retried;
 * - busy, failed, store or queue unavailable (the receipt says retry): refused without requeue, which the
 *   broker dead-letters to `<queue>.retry`; it comes back after `delayMs`, up to `maxAttempts` deliveries,
 *   then it is parked.
 * Parking waits for the broker's confirm before the acknowledgement, so a crash between the two leaves
 * the message where it was (redelivered, and a duplicate for the idempotency store).
 */
export class RabbitMqDeliveryConsumer {
  private readonly logger = new Logger('PaymentsRabbitMq');
  /** Parking lines are sampled per reason: anyone who can publish can cause them. */
  private readonly parked = new WebhookLogSampler({ write: (line) => this.logger.warn(line), now: () => Date.now() });

  constructor(
    private readonly receiver: PaymentsWebhookReceiver,
    private readonly options: ResolvedRabbitMqOptions,
  ) {}

  async consume(message: ConsumeMessage, channel: ConfirmChannel): Promise<RabbitMqDeliveryFate> {
    // receive() never rejects: every error is a receipt (500 internal_error, retried).
    const receipt = await this.receiver.receive({
      body: message.content,
      headers: serviceHeaders(message.properties.headers),
    });
    try {
      if (!receipt.retry) {
        if (receipt.received) {
          channel.ack(message);
          return 'acked';
        }
        await this.park(channel, message, receipt, rejectionsOf(message, this.options.queue) + 1);
        return 'parked';
      }
      const attempt = rejectionsOf(message, this.options.queue) + 1;
      if (attempt >= this.options.maxAttempts) {
        await this.park(channel, message, receipt, attempt);
        return 'parked';
      }
      // Dead-lettered by the broker to the retry queue; back in the work queue after delayMs.
      channel.nack(message, false, false);
      return 'retried';
    } catch (error) {
      // The channel went away: the broker delivers the unacknowledged message again, to this or another consumer.
      this.logger.warn(
        `A message could not be settled (${error instanceof Error ? error.message : typeof error}); the broker will deliver it again`,
      );
      return 'unsettled';
    }
  }

  private async park(
    channel: ConfirmChannel,
    message: ConsumeMessage,
    receipt: PaymentsWebhookReceipt,
    attempts: number,
  ): Promise<void> {
    const reason = receipt.error ?? receipt.outcome;
    const headers: Record<string, string | number> = {
      ...serviceHeaders(message.properties.headers),
      'x-payments-reason': reason,
      'x-payments-status': receipt.status,
      'x-payments-attempts': attempts,
      'x-payments-parked-at': new Date().toISOString(),
    };
    if (receipt.missingHeaders) headers['x-payments-missing-headers'] = receipt.missingHeaders.join(', ');
    await sendConfirmed(channel, this.options.deadQueue, message.content, {
      headers,
      persistent: true,
      contentType: message.properties.contentType as string | undefined,
      messageId: message.properties.messageId as string | undefined,
    });
    channel.ack(message);
    this.parked.log(
      reason,
      `Parked a message in ${this.options.deadQueue} after ${attempts} deliver${attempts === 1 ? 'y' : 'ies'}: ${receipt.status} ${reason}${receipt.missingHeaders ? ` (no ${receipt.missingHeaders.join(', ')} header)` : ''}`,
    );
  }
}
