/**
 * The watch stores of bench/reconcile.bench.js, each filled with a backlog of `size` overdue intents
 * (checked before, so in the "checked" lane; created two days ago, so each check reschedules it an
 * hour on) and measured for its size. Since issue 40 the list lives in the idempotency store's records
 * (one record per intent): each store is the `intentWatchStore()` of an idempotency store, as the module
 * makes it.
 *   memory    MemoryIdempotencyStore's list, filled through watch(); size = V8 heap growth after a full GC
 *   redis     RedisIdempotencyStore's list on a private redis-server (its own port, no persistence), filled by
 *             a pipeline in the store's own format (the record `<prefix>{i:<id>}` with its `w` and `W`
 *             fields, and the due index `<prefix>{watch}:due`); size = INFO used_memory growth
 *   postgres  PostgresIdempotencyStore's list on its own table of the local PostgreSQL (PG_URL), filled by
 *             one INSERT ... SELECT generate_series of watched records; size = pg_total_relation_size
 *             (rows and every index)
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
  const capacity = Math.max(size * 2, 100_000);
  const records = new lib.MemoryIdempotencyStore({ maxEntries: capacity, maxWatchedIntents: capacity });
  const store = records.intentWatchStore();
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
  return { store, records, bytes, enginePids: [], close: async () => undefined };
}

export async function redisStore(lib, size, now, port) {
  const server = await startRedis({ port, persistence: 'none' });
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: false });
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))[1]);
  const before = await usedMemory();
  const keyPrefix = 'bench:';
  const due = `${keyPrefix}{watch}:due`;
  const watch = `payment_intent|${now - 2 * DAY}`;
  const until = now + 8 * DAY;
  for (let done = 0; done < size;) {
    const chunk = Math.min(10_000, size - done);
    const pipeline = redis.pipeline();
    const members = [];
    for (let n = 0; n < chunk; n++) {
      const id = randomUUID();
      const next = now - 1 - ((done + n) % 3_600_000);
      // The record as RedisIdempotencyStore keeps a watched intent's: `w` the watch, `W` until when it keeps the record.
      const record = `${keyPrefix}{i:${id}}`;
      pipeline.hset(record, 'w', `${watch}|${next}|3`, 'W', until).pexpireat(record, until);
      members.push(next, id);
    }
    await pipeline.zadd(due, ...members).exec();
    done += chunk;
  }
  const bytes = (await usedMemory()) - before;
  const store = new lib.RedisIdempotencyStore(redis, { keyPrefix }).intentWatchStore();
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
  const store = new lib.PostgresIdempotencyStore(pool, { table, cleanupEvery: 0 }).intentWatchStore();
  await store.due(0, 1); // creates the table, its indexes and functions
  await pool.query(
    `INSERT INTO ${table} (key, expires_at, watch_scope, watch_kind, watch_created_ms, watch_next_ms, watch_checks, watch_until)
SELECT 'i:' || gen_random_uuid()::text, now() + interval '8 days', '', 'payment_intent', $1::bigint,
  $2::bigint - 1 - (n % 3600000), 3, now() + interval '8 days' FROM generate_series(1, $3::int) n`,
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
      // The store's functions (`<table>_claim`, ...).
      const { rows: functions } = await pool
        .query(`SELECT oid::regprocedure::text AS f FROM pg_proc WHERE proname LIKE $1`, [`${table}\\_%`])
        .catch(() => ({ rows: [] }));
      for (const { f } of functions) await pool.query(`DROP FUNCTION IF EXISTS ${f}`).catch(() => undefined);
      await pool.end();
    },
  };
}
