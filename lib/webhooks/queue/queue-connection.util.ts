import type { PaymentsQueueConnection } from '../contracts/payments-queue.options.js';

/** An ioredis client (`Redis` or `Cluster`) as far as the queue needs it. */
export interface DuplicableRedisClient {
  /** `Redis.duplicate(options)`; `Cluster.duplicate(startupNodes, options)`. */
  duplicate(...args: unknown[]): DuplicableRedisClient;
  isCluster?: boolean;
  options?: { redisOptions?: Record<string, unknown> };
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  status?: string;
}

/** Whether `connection` is a client (the user's; never closed by the module) rather than ioredis options. */
export function isRedisClient(connection: PaymentsQueueConnection): connection is DuplicableRedisClient {
  const candidate = connection as Partial<DuplicableRedisClient>;
  return typeof candidate.duplicate === 'function' && typeof candidate.quit === 'function';
}

/** Whether `connection` is an ioredis `Cluster` client (BullMQ then needs a hash-tagged prefix). */
export function isClusterConnection(connection: PaymentsQueueConnection): boolean {
  return isRedisClient(connection) && connection.isCluster === true;
}

/** Whether the client or options set an ioredis `keyPrefix` (BullMQ refuses it; it has its own `prefix`). */
export function usesKeyPrefix(connection: PaymentsQueueConnection): boolean {
  const options = isRedisClient(connection)
    ? connection.isCluster === true
      ? connection.options?.redisOptions
      : (connection as { options?: Record<string, unknown> }).options
    : (connection as Record<string, unknown>);
  return typeof options?.['keyPrefix'] === 'string' && options['keyPrefix'] !== '';
}

/**
 * The connections of one queue. Producer and worker each get their own: the producer fails fast when
 * Redis is unreachable (`enableOfflineQueue: false`, so a delivery is answered 503 instead of
 * waiting), while a worker blocks on Redis and must never give up (`maxRetriesPerRequest: null`, which
 * BullMQ requires). Clients the module creates by duplicating the user's client are in `owned` and
 * closed on shutdown; the user's own client never is.
 */
export interface QueueConnections {
  producer: object;
  worker: object;
  owned: DuplicableRedisClient[];
}

/** Builds the producer and worker connections from the user's client or options. */
export function resolveQueueConnections(connection: PaymentsQueueConnection, withWorker: boolean): QueueConnections {
  if (isRedisClient(connection)) {
    const producer = duplicate(connection, { enableOfflineQueue: false });
    const owned = [producer];
    let worker: object = connection;
    if (withWorker) {
      const workerClient = duplicate(connection, { maxRetriesPerRequest: null, enableOfflineQueue: true });
      owned.push(workerClient);
      worker = workerClient;
    }
    return { producer, worker, owned };
  }
  // Options: BullMQ creates (and on close, quits) the clients itself.
  return {
    producer: { ...connection, enableOfflineQueue: false },
    worker: { ...connection, maxRetriesPerRequest: null, enableOfflineQueue: true },
    owned: [],
  };
}

/**
 * The worker's connection alone: the worker (`PaymentEventsWorker`) opens it on bootstrap, apart from
 * the producer, and closes what it owns on shutdown.
 */
export function resolveWorkerConnection(connection: PaymentsQueueConnection): {
  worker: object;
  owned: DuplicableRedisClient[];
} {
  if (isRedisClient(connection)) {
    const worker = duplicate(connection, { maxRetriesPerRequest: null, enableOfflineQueue: true });
    return { worker, owned: [worker] };
  }
  return { worker: { ...connection, maxRetriesPerRequest: null, enableOfflineQueue: true }, owned: [] };
}

/** Closes the clients the module created: QUIT on a live connection, a plain disconnect on one that is down or reconnecting. */
export async function closeOwnedClients(owned: readonly DuplicableRedisClient[]): Promise<void> {
  await Promise.all(
    owned.map(async (client) =>
      client.status === 'ready' ? client.quit().catch(() => client.disconnect()) : client.disconnect(),
    ),
  );
}

/** `duplicate` with overrides, for a standalone client or a Cluster (whose node options are nested). */
function duplicate(client: DuplicableRedisClient, override: Record<string, unknown>): DuplicableRedisClient {
  if (client.isCluster === true) {
    const { maxRetriesPerRequest, ...clusterOverride } = override;
    const redisOptions = { ...client.options?.redisOptions };
    if ('maxRetriesPerRequest' in override) redisOptions.maxRetriesPerRequest = maxRetriesPerRequest;
    return client.duplicate([], { ...clusterOverride, redisOptions });
  }
  return client.duplicate(override);
}
