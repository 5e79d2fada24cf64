// Types only: nats is an optional peer, loaded on the first publish.
import type { NatsConnection } from 'nats';
import { fail, isObject, kind } from '../../errors/payments-option.checks.js';
import type { PaymentsDeliveryPublisher } from '../../serverless/payments-forwarder.js';
import type { PaymentsForwardedDelivery } from '../../serverless/serverless-http.event.js';
import { loadNats } from './nats-jetstream.util.js';

/** Options of `natsPublisher`. */
export interface NatsPublisherOptions {
  servers: string | string[];
  /** The work subject (`PaymentsNatsOptions.subject`). Default 'payments.webhooks'. */
  subject?: string;
}

/**
 * Publishes forwarded deliveries to the work subject through JetStream: the body as the message's data,
 * the headers as its headers; `publish` resolves once JetStream acknowledged the message (stored in the
 * stream; a subject no stream takes is refused). Connects on the first publish and again after a loss.
 *
 * @example createPaymentsForwarder({ verifier, publisher: natsPublisher({ servers: process.env.NATS_URL! }) })
 */
export function natsPublisher(options: NatsPublisherOptions): PaymentsDeliveryPublisher {
  if (!isObject(options)) fail('natsPublisher(options)', `must be an object, got ${kind(options)}`, 'pass { servers }');
  const servers = typeof options.servers === 'string' ? [options.servers] : options.servers;
  if (!Array.isArray(servers) || servers.length === 0) {
    fail('natsPublisher({ servers })', 'must be one or more server addresses', "pass e.g. 'nats://127.0.0.1:4222'");
  }
  const subject = options.subject ?? 'payments.webhooks';
  let open: Promise<NatsConnection> | undefined;
  const connect = (): Promise<NatsConnection> => {
    open ??= (async () => {
      const nats = await loadNats();
      const nc = await nats.connect({ servers });
      void nc.closed().then(() => (open = undefined));
      return nc;
    })();
    open.catch(() => (open = undefined));
    return open;
  };
  return {
    async publish(delivery: PaymentsForwardedDelivery): Promise<void> {
      const nats = await loadNats();
      const nc = await connect();
      const headers = nats.headers();
      for (const [name, value] of Object.entries(delivery.headers)) headers.set(name, value);
      await nc.jetstream().publish(subject, delivery.body, { headers });
    },
    async close(): Promise<void> {
      const current = open;
      open = undefined;
      if (current) await (await current).drain().catch(() => undefined);
    },
  };
}
