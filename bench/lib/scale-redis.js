/**
 * Redis endpoints of the scale benchmark and the clean-up of its keys (every key of a run contains
 * `scale-<runId>`: store keys `scale-<runId>:idem:...`, queue keys `{scale-<runId>}:...`).
 */
export const SINGLE_REDIS = { host: '127.0.0.1', port: 6379 };
export const CLUSTER_NODES = [7101, 7102, 7103].map((port) => ({ host: '127.0.0.1', port }));

/** Whether the 3-master cluster answers with cluster_state:ok. */
export async function clusterReady() {
  const { Redis } = await import('ioredis');
  const node = new Redis({
    ...CLUSTER_NODES[0],
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await node.connect();
    return /cluster_state:ok/.test(await node.cluster('INFO'));
  } catch {
    return false;
  } finally {
    node.disconnect();
  }
}

/**
 * Deletes every key matching `*<marker>*` on the single node and on each cluster master (one key per
 * UNLINK on the masters: keys of different slots cannot go in one command). Returns the count removed.
 */
export async function deleteRunKeys(marker, { cluster = true } = {}) {
  const { Redis } = await import('ioredis');
  let removed = 0;
  for (const endpoint of [SINGLE_REDIS, ...(cluster ? CLUSTER_NODES : [])]) {
    const node = new Redis({ ...endpoint, maxRetriesPerRequest: 1 });
    try {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `*${marker}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) {
          const pipeline = node.pipeline();
          for (const key of keys) pipeline.unlink(key);
          await pipeline.exec();
          removed += keys.length;
        }
      } while (cursor !== '0');
    } finally {
      node.disconnect();
    }
  }
  return removed;
}

/** A BullMQ Queue handle on the queue `name` under `prefix` (single node or cluster), for counts and pause/resume. */
export async function openQueue({ name, prefix, cluster }) {
  const { Queue } = await import('bullmq');
  const { Redis, Cluster } = await import('ioredis');
  const connection = cluster
    ? new Cluster(CLUSTER_NODES, { redisOptions: { maxRetriesPerRequest: 1 } })
    : new Redis({ ...SINGLE_REDIS, maxRetriesPerRequest: 1 });
  const queue = new Queue(name, { connection, prefix });
  return {
    queue,
    /** completed, failed, waiting, active, delayed, paused */
    counts: () => queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed', 'paused'),
    close: async () => {
      await queue.close();
      connection.disconnect();
    },
  };
}

/** Counts of the BullMQ queue `name` under `prefix` (completed, failed, waiting, active, delayed, paused). */
export async function queueCounts(spec) {
  const handle = await openQueue(spec);
  try {
    return await handle.counts();
  } finally {
    await handle.close();
  }
}
