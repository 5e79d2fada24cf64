import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
// Types only: nats is an optional peer, loaded at boot.
import type { ConsumerMessages, JsMsg, NatsConnection } from 'nats';
import type { PaymentsWebhookReceipt, PaymentsWebhookReceiver } from '../../webhooks/index.js';
import { WebhookLogSampler } from '../../webhooks/log/webhook-log.sampler.js';
import { attemptOf, ensureNatsTopology, loadNats, natsServiceHeaders } from './nats-jetstream.util.js';
import type { ResolvedNatsOptions } from './nats.options.js';

/** What became of one message: acknowledged, delivered again later (`nak` with a delay), or parked. */
export type NatsDeliveryFate = 'acked' | 'retried' | 'parked' | 'unsettled';

/**
 * A durable JetStream consumer of the work stream, run at boot and stopped at shutdown: each message
 * through the instance's receiver, then settled by its receipt:
 * - any 2xx: acknowledged;
 * - refused (forged, malformed, too large, stale, unsigned): published to the dead-letter stream with
 *   the reason, then terminated (never redelivered);
 * - busy, failed, store unavailable: `nak` with `delayMs` (JetStream delivers it again then), up to
 *   `maxAttempts` deliveries, after which it is parked.
 * Parking waits for JetStream's acknowledgement of the dead letter before the message is terminated,
 * so a crash between the two leaves it in the work stream (delivered again: a duplicate at worst).
 */
export class NatsDeliveryConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PaymentsNats');
  private readonly parked = new WebhookLogSampler({ write: (line) => this.logger.warn(line), now: () => Date.now() });
  private connection: NatsConnection | undefined;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly receiver: PaymentsWebhookReceiver,
    private readonly options: ResolvedNatsOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nats = await loadNats();
    const nc = await nats.connect({ servers: this.options.servers, name: `nestjs-payments:${this.options.durable}` });
    this.connection = nc;
    await ensureNatsTopology(nc, nats, this.options);
    const consumer = await nc.jetstream().consumers.get(this.options.stream, this.options.durable);
    this.messages = await consumer.consume({ max_messages: this.options.prefetchCount });
    this.loop = this.run(this.messages);
    this.logger.log(
      `Consuming webhook deliveries from JetStream stream ${this.options.stream} (${this.options.subject}), durable ${this.options.durable}`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.messages?.close().catch(() => undefined);
    await this.loop;
    await Promise.allSettled(this.inFlight);
    await this.connection?.drain().catch(() => undefined);
  }

  /** The connection, for a test or a health check. */
  get nats(): NatsConnection | undefined {
    return this.connection;
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    for await (const message of messages) {
      const settled = this.consume(message).finally(() => this.inFlight.delete(settled));
      this.inFlight.add(settled);
    }
  }

  /** One message: the receiver, then its settlement. Never rejects. */
  async consume(message: JsMsg): Promise<NatsDeliveryFate> {
    const receipt = await this.receiver.receive({ body: message.data, headers: natsServiceHeaders(message.headers) });
    try {
      const attempt = attemptOf(message);
      if (!receipt.retry) {
        if (receipt.received) {
          message.ack();
          return 'acked';
        }
        await this.park(message, receipt, attempt);
        return 'parked';
      }
      if (attempt >= this.options.maxAttempts) {
        await this.park(message, receipt, attempt);
        return 'parked';
      }
      message.nak(this.options.delayMs);
      return 'retried';
    } catch (error) {
      // The connection went away: JetStream delivers the unacknowledged message again after ackWaitMs.
      this.logger.warn(
        `A message could not be settled (${error instanceof Error ? error.message : typeof error}); JetStream will deliver it again`,
      );
      return 'unsettled';
    }
  }

  private async park(message: JsMsg, receipt: PaymentsWebhookReceipt, attempts: number): Promise<void> {
    const nats = await loadNats();
    const headers = nats.headers();
    for (const [name, values] of message.headers ?? []) for (const value of values) headers.append(name, value);
    const reason = receipt.error ?? receipt.outcome;
    headers.set('x-payments-reason', reason);
    headers.set('x-payments-status', String(receipt.status));
    headers.set('x-payments-attempts', String(attempts));
    headers.set('x-payments-parked-at', new Date().toISOString());
    if (receipt.missingHeaders) headers.set('x-payments-missing-headers', receipt.missingHeaders.join(', '));
    await this.connection!.jetstream().publish(this.options.deadSubject, message.data, { headers });
    // No reason text: servers before 2.10 ignore a TERM that carries one, and would deliver it again.
    message.term();
    this.parked.log(
      reason,
      `Parked a message in ${this.options.deadStream} after ${attempts} deliver${attempts === 1 ? 'y' : 'ies'}: ${receipt.status} ${reason}${receipt.missingHeaders ? ` (no ${receipt.missingHeaders.join(', ')} header)` : ''}`,
    );
  }
}
