/**
 * The watch stores of bench/reconcile.bench.js, each filled with a backlog of `size` overdue intents
 * (checked before, so in the "checked" lane; created two days ago, so each check reschedules it an
 * hour on) and measured for its size:
 *   memory    MemoryIntentWatchStore, filled through watch(); size = V8 heap growth after a full GC
 *   redis     RedisIntentWatchStore on a private redis-server (its own port, no persistence), filled by
 *             a pipeline of HSET/ZADD in the store's own format; size = INFO used_memory growth
 *   postgres  PostgresIntentWatchStore on its own table of the local PostgreSQL (PG_URL), filled by one
 *             INSERT ... SELECT generate_series; size = pg_total_relation_size (rows and both indexes)
 * Each store is closed and its data removed by `close()`.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { startRedis } from './private-redis.js';

const DAY = 86_400_000;
const TICK_MS = 10;

/** utime + stime (ms) of one process, from /proc (Linux); 0 where it cannot be read. */
export function pidCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/**
 * A UUID as the module holds one (read from JSON, lower-cased): a flat string. `randomUUID()` returns a
 * string built of pieces that V8 keeps as a rope, ~480 bytes instead of ~56.
 */
const flatId = () => Buffer.from(randomUUID(), 'latin1').toString('latin1');

function heapAfterGc() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

export async function memoryStore(lib, size, now) {
  const before = heapAfterGc();
  const store = new lib.MemoryIntentWatchStore({ maxIntents: Math.max(size * 2, 100_000) });
  for (let n = 0; n < size; n++) {
    store.watch({
      kind: 'payment_intent',
      id: flatId(),
      createdAt: now - 2 * DAY,
      nextCheckAt: now - 1 - (n % 3_600_000),
      checks: 3,
    });
  }
  const bytes = heapAfterGc() - before;
  return { store, bytes, enginePids: [], close: async () => undefined };
}

export async function redisStore(lib, size, now, port) {
  const server = await startRedis({ port, persistence: 'none' });
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: false });
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))[1]);
  const before = await usedMemory();
  const keyPrefix = 'bench:';
  const due = `${keyPrefix}{watch}:due`;
  const data = `${keyPrefix}{watch}:intents`;
  const value = JSON.stringify({ kind: 'payment_intent', createdAt: now - 2 * DAY, checks: 3 });
  for (let done = 0; done < size;) {
    const chunk = Math.min(10_000, size - done);
    const fields = [];
    const members = [];
    for (let n = 0; n < chunk; n++) {
      const id = randomUUID();
      fields.push(id, value);
      members.push(now - 1 - ((done + n) % 3_600_000), id);
    }
    await redis
      .pipeline()
      .hset(data, ...fields)
      .zadd(due, ...members)
      .exec();
    done += chunk;
  }
  const bytes = (await usedMemory()) - before;
  const store = new lib.RedisIntentWatchStore(redis, { keyPrefix });
  return {
    store,
    bytes,
    enginePids: server.pids,
    close: async () => {
      redis.disconnect();
      await server.stop();
    },
  };
}

export async function postgresStore(lib, size, now, table) {
  const pool = new pg.Pool({
    connectionString: process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    max: 4,
    application_name: 'reconcile-bench',
  });
  pool.on('error', () => undefined);
  const store = new lib.PostgresIntentWatchStore(pool, { table });
  await store.due(0, 1); // creates the tables and indexes
  await pool.query(
    `INSERT INTO ${table} SELECT gen_random_uuid()::text, 'payment_intent', $1::bigint, $2::bigint - 1 - (n % 3600000), 3 FROM generate_series(1, $3::int) n`,
    [now - 2 * DAY, now, size],
  );
  await pool.query(`VACUUM ANALYZE ${table}`);
  const { rows } = await pool.query(`SELECT pg_total_relation_size($1) AS bytes`, [table]);
  const pids = async () =>
    (await pool.query(`SELECT pid FROM pg_stat_activity WHERE application_name = 'reconcile-bench'`)).rows.map((r) =>
      Number(r.pid),
    );
  return {
    store,
    bytes: Number(rows[0].bytes),
    enginePids: await pids(),
    refreshPids: pids,
    close: async () => {
      await pool.query(`DROP TABLE IF EXISTS ${table}, ${table}_lease`).catch(() => undefined);
      await pool.end();
    },
  };
}
