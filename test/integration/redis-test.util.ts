import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** The Redis the integration suites use (`REDIS_URL`, default the local one). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The Redis Cluster nodes of `REDIS_CLUSTER_NODES=127.0.0.1:7101,127.0.0.1:7102,...` (CI starts a local
 * 3-master cluster with .ci/redis-cluster.sh); empty when it is not set.
 */
export const REDIS_CLUSTER_NODES: { host: string; port: number }[] = (process.env.REDIS_CLUSTER_NODES ?? '')
  .split(',')
  .map((node) => node.trim())
  .filter((node) => node !== '')
  .map((node) => {
    const [host, port] = node.split(':');
    return { host: host!, port: Number(port) };
  });

/** Cluster suites run when a cluster is given, and always in CI, where a missing cluster must fail the run. */
export const RUN_CLUSTER_SUITES = REDIS_CLUSTER_NODES.length > 0 || process.env.CI === 'true';

/** A client to the test cluster; close it with `cluster.quit()`. */
export function createCluster(): Cluster {
  return new Cluster(REDIS_CLUSTER_NODES, { redisOptions: { maxRetriesPerRequest: 3 } });
}

/** Deletes every key starting with `prefix` on every master (SCAN per node, never KEYS; one DEL per key: keys of one node may sit in different slots). */
export async function deleteClusterKeys(cluster: Cluster, prefix: string): Promise<void> {
  for (const node of cluster.nodes('master') as Redis[]) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) await node.del(key);
    } while (cursor !== '0');
  }
}

/** The one key of a `RedisIdempotencyStore` record (a hash; its whole record key is the hash tag). */
export function redisRecordKey(prefix: string, key: string): string {
  return `${prefix}{${key}}`;
}

/** A client to the test Redis; close it with `quitAll`. */
export function createRedis(options: RedisOptions = {}): Redis {
  return new Redis(REDIS_URL, { lazyConnect: false, ...options });
}

/** A prefix no other test uses, so suites can run against a shared Redis and clean up after themselves. */
export function uniquePrefix(label: string): string {
  return `test:${label}:${randomUUID().slice(0, 8)}:`;
}

/** A queue name no other test uses (BullMQ queue names may not contain ':'). */
export function uniqueQueueName(label: string): string {
  return `test-${label}-${randomUUID().slice(0, 8)}`;
}

/** Deletes every key starting with `prefix` (SCAN, never KEYS). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

/** A TCP port on which nothing listens (bound, then released). */
export async function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      server.close(() => resolve(address.port));
    });
  });
}

/** A client to a port where no Redis answers: every command fails at once, nothing reconnects. */
export function createUnreachableRedis(port: number): Redis {
  return new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    // The socket never opened; do not keep a 2 s destroy timer alive after disconnect().
    disconnectTimeout: 10,
  });
}

/** Polls `check` (no fixed sleeps) until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  {
    timeoutMs = 30_000,
    intervalMs = 25,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Closes clients, ignoring the ones already closed. */
export async function quitAll(...clients: Redis[]): Promise<void> {
  await Promise.all(
    clients.map((client) => (client.status === 'end' ? undefined : client.quit().catch(() => client.disconnect()))),
  );
}
