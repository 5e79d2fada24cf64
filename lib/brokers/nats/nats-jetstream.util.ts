// Types only: nats is an optional peer, loaded when a connection is made.
import type { JetStreamManager, JsMsg, MsgHdrs, NatsConnection } from 'nats';
import type { ResolvedNatsOptions } from './nats.options.js';

/** The `nats` module, loaded once, when first needed. */
export type NatsModule = typeof import('nats');

let loaded: Promise<NatsModule> | undefined;
export const loadNats = (): Promise<NatsModule> => (loaded ??= import('nats'));

/** Header names this package adds to a parked message: never handed to the receiver, never replayed. */
export const isParkingHeader = (name: string): boolean => name.toLowerCase().startsWith('x-payments-');

/** A message's headers as the service sent them: lower-cased names, one string (or several) each. */
export function natsServiceHeaders(headers: MsgHdrs | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (headers === undefined) return out;
  for (const [name, values] of headers) {
    if (isParkingHeader(name) || values.length === 0) continue;
    out[name.toLowerCase()] = values.length === 1 ? values[0]! : values;
  }
  return out;
}

/** Creates a stream, or leaves the one there (its subjects and retention are the caller's to keep). */
async function ensureStream(
  jsm: JetStreamManager,
  nats: NatsModule,
  name: string,
  subject: string,
  workQueue: boolean,
): Promise<void> {
  try {
    await jsm.streams.info(name);
    return;
  } catch (error) {
    if (!/stream not found/i.test(String((error as Error)?.message))) throw error;
  }
  await jsm.streams.add({
    name,
    subjects: [subject],
    storage: nats.StorageType.File,
    retention: workQueue ? nats.RetentionPolicy.Workqueue : nats.RetentionPolicy.Limits,
  });
}

/** The work stream, its dead-letter stream and the durable consumer (pull, explicit acknowledgement). */
export async function ensureNatsTopology(
  nc: NatsConnection,
  nats: NatsModule,
  options: ResolvedNatsOptions,
): Promise<void> {
  const jsm = await nc.jetstreamManager();
  await ensureStream(jsm, nats, options.stream, options.subject, true);
  await ensureStream(jsm, nats, options.deadStream, options.deadSubject, false);
  await jsm.consumers.add(options.stream, {
    durable_name: options.durable,
    ack_policy: nats.AckPolicy.Explicit,
    deliver_policy: nats.DeliverPolicy.All,
    filter_subject: options.subject,
    ack_wait: nats.nanos(options.ackWaitMs),
    // One delivery more than the attempts: the last is the one that parks the message.
    max_deliver: options.maxAttempts + 1,
    max_ack_pending: Math.max(1_000, options.prefetchCount * 4),
  });
}

/** The delivery's attempt number (1 the first time), as JetStream counts it. */
export const attemptOf = (message: JsMsg): number => message.info.deliveryCount;
