import { loadNats, isParkingHeader } from './nats-jetstream.util.js';
import { natsDeadLetters } from './nats.options.js';

/** Options of `replayNatsDeadLetters`. */
export interface NatsReplayOptions {
  servers: string | string[];
  /** The work stream and subject (`PaymentsNatsOptions`). Defaults 'PAYMENTS_WEBHOOKS', 'payments.webhooks'. */
  stream?: string;
  subject?: string;
  /** At most this many messages (default: every message of the dead-letter stream). */
  limit?: number;
  /** Replays only the messages this returns true for (the others stay parked). */
  filter?: (parked: { reason: string | undefined; headers: Record<string, string> }) => boolean;
}

/**
 * Moves parked messages from `<stream>_DEAD` back to the work subject, once the cause is fixed: each one
 * is republished with the service's headers only (the reason dropped, so it gets its full number of
 * attempts), acknowledged by JetStream, then deleted from the dead-letter stream. A message the receiver
 * already handled is a duplicate there: nothing runs twice. Returns how many were moved.
 *
 * @example await replayNatsDeadLetters({ servers: process.env.NATS_URL! })
 */
export async function replayNatsDeadLetters(options: NatsReplayOptions): Promise<number> {
  const stream = options.stream ?? 'PAYMENTS_WEBHOOKS';
  const subject = options.subject ?? 'payments.webhooks';
  const { deadStream } = natsDeadLetters(stream, subject);
  const nats = await loadNats();
  const nc = await nats.connect({ servers: options.servers });
  try {
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    const info = await jsm.streams.info(deadStream);
    const limit = Math.min(options.limit ?? info.state.messages, info.state.messages);
    let moved = 0;
    let seq = info.state.first_seq;
    for (let seen = 0; seen < limit && seq <= info.state.last_seq; seq += 1) {
      let stored;
      try {
        stored = await jsm.streams.getMessage(deadStream, { seq });
      } catch {
        continue; // deleted already
      }
      seen += 1;
      const all: Record<string, string> = {};
      for (const [name, values] of stored.header ?? []) all[name.toLowerCase()] = values.join(', ');
      if (options.filter && !options.filter({ reason: all['x-payments-reason'], headers: all })) continue;
      const headers = nats.headers();
      for (const [name, values] of stored.header ?? []) {
        if (isParkingHeader(name)) continue;
        for (const value of values) headers.append(name, value);
      }
      await js.publish(subject, stored.data, { headers });
      await jsm.streams.deleteMessage(deadStream, seq, false);
      moved += 1;
    }
    return moved;
  } finally {
    await nc.close();
  }
}
