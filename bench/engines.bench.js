#!/usr/bin/env node
/**
 * The durable paths against hand-written anchors, per delivery and without HTTP (issue 31, item 2):
 * CPU time (not req/s, which a shared machine moves by 10x) of this process and of the bench's own
 * engine processes only, and the exchanges each delivery makes. Sequential, one delivery at a time, so
 * each figure is the cost of one delivery's path; variants interleaved over rounds, medians reported.
 *
 *   inbox (PostgreSQL at PG_URL, a database of its own, one pooled connection, its backend's pid read
 *   from pg_backend_pid()):
 *     ours-inbox          pgTransactionRunner + the inbox claim (PaymentsInbox's statement, prepared), the
 *                         ledger INSERT (prepared, as the hand-written one's), COMMIT: BEGIN sent with
 *                         the claim (the current lib, `--lib`)
 *     ours-inbox-text-ledger  the same with the ledger INSERT sent as text through `tx.query`
 *     ours-inbox-before   the same as ours-inbox on `--before-lib`
 *     hand-inbox          bench/lib/hand-inbox.js: what an expert writes with pg
 *   claim (a private 3-master Redis Cluster, its pids):
 *     ours-cluster        RedisIdempotencyStore.claim then complete (ioredis Cluster)
 *     hand-cluster        bench/lib/hand-claim.js: the same two scripts through defineCommand
 *   persistence (private single redis-server instances):
 *     ours-redis          RedisIdempotencyStore claim + complete, `appendonly no`, `save ""`
 *     ours-redis-aof      the same with `appendonly yes`, `appendfsync everysec`
 *
 *   node bench/engines.bench.js [--deliveries 1000] [--rounds 3] [--lib DIR] [--before-lib DIR] [--out FILE]
 * Writes bench/results/engines.json by default; run.js copies its ratios into latest.json.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Cluster, Redis } from 'ioredis';
import { createBenchDatabase, BENCH_LEDGER_INSERT, BENCH_LEDGER_SQL } from './lib/postgres-bench.js';
import { HAND_INBOX_SQL, handInbox } from './lib/hand-inbox.js';
import { handClaim } from './lib/hand-claim.js';
import { startCluster, startRedis } from './lib/private-redis.js';
import { median, round } from './lib/stats.js';

const benchDir = new URL('.', import.meta.url).pathname;
const { values: args } = parseArgs({
  options: {
    deliveries: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    lib: { type: 'string', default: 'dist-sample/lib' },
    'before-lib': { type: 'string' },
    out: { type: 'string', default: `${benchDir}results/engines.json` },
    only: { type: 'string' },
  },
});
const deliveries = Number(args.deliveries);
const rounds = Number(args.rounds);
const libUrl = (dir) => new URL(`${dir.replace(/\/$/, '')}/index.js`, `file://${process.cwd()}/`).href;
const only = args.only ? new Set(args.only.split(',')) : undefined;

/**
 * CPU time of a process, all its threads, in µs: the run time in ns of /proc/<pid>/task/<tid>/schedstat
 * (utime + stime of /proc/<pid>/stat tick at 10 ms: 10 µs per delivery over 1000 deliveries).
 */
function cpuUs(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  return ns / 1000;
}
const enginesCpuUs = (pids) => pids.reduce((total, pid) => total + cpuUs(pid), 0);

/** Runs `deliver` `deliveries` times; CPU of this process and of `pids`, per delivery, and exchanges. */
async function measure(deliver, pids, exchanges) {
  for (let i = 0; i < 200; i++) await deliver(); // warm-up
  const exchangesBefore = exchanges?.();
  const ownBefore = process.cpuUsage();
  const engineBefore = enginesCpuUs(pids);
  const started = performance.now();
  for (let i = 0; i < deliveries; i++) await deliver();
  const wallUs = (performance.now() - started) * 1000;
  const own = process.cpuUsage(ownBefore);
  return {
    receiverCpuUs: (own.user + own.system) / deliveries,
    engineCpuUs: (enginesCpuUs(pids) - engineBefore) / deliveries,
    wallUs: wallUs / deliveries,
    // PostgreSQL only: `client.query` calls (one exchange each); the Redis variants make 2 EVALSHA each.
    exchanges: exchanges ? (exchanges() - exchangesBefore) / deliveries : null,
  };
}

/** A pool of one connection whose client counts its `query` calls (one exchange each). */
async function countingPool(url) {
  const counter = { exchanges: 0 };
  const pool = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 0 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    const query = client.query.bind(client);
    client.query = (...a) => {
      counter.exchanges++;
      return query(...a);
    };
  });
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  return { pool, counter, pid: Number(rows[0].pid) };
}

/** The handler's effect in every inbox variant: the hand-written inbox's ledger INSERT, prepared. */
const LEDGER = BENCH_LEDGER_INSERT;

/** ours: the inbox transaction as PaymentsInbox runs it (claim, then the handler's INSERT), on `lib`. */
async function oursInbox(lib, url, { textLedger = false } = {}) {
  const { pgTransactionRunner } = await import(lib);
  const { paymentsInboxSchema } = await import(new URL('webhooks/transactional/payments-inbox.js', lib).href);
  const { preparePgStatement } = await import(new URL('webhooks/transactional/pg-transaction.runner.js', lib).href);
  const first = await import(new URL('webhooks/transactional/pg-first-statement.js', lib).href).catch(() => undefined);
  const sqlModule = await import(new URL('webhooks/transactional/payments-inbox.sql.js', lib).href).catch(
    () => undefined,
  );
  const { pool, counter, pid } = await countingPool(url);
  await pool.query(paymentsInboxSchema('bench_inbox'));
  // PaymentsInbox's claim on the table above: the lib's own statements (payments-inbox.sql.ts), or, for a
  // lib from before that file (3723d8e and earlier), the one statement it sent, written out here.
  const sql = sqlModule?.paymentsInboxSql('bench_inbox') ?? {
    claimFlags: `WITH l AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked),
ins AS (
  INSERT INTO "bench_inbox" AS r (key, completed_at, expires_at)
  SELECT $1, clock_timestamp(), clock_timestamp() + $2::float8 * interval '1 millisecond' FROM l WHERE l.locked
  ON CONFLICT (key) DO UPDATE SET completed_at = EXCLUDED.completed_at, expires_at = EXCLUDED.expires_at
  WHERE r.expires_at <= clock_timestamp()
  RETURNING 1
)
SELECT (SELECT locked FROM l) AS locked, (SELECT count(*) FROM ins)::int AS inserted`,
  };
  const claimSql = sql.claim ?? sql.claimFlags;
  preparePgStatement('payments_inbox_claim', claimSql);
  const runner = pgTransactionRunner(pool);
  const fused = first?.runsAfterFirstStatement(runner) ? runner[first.RUN_AFTER_FIRST_STATEMENT] : undefined;
  // The handler's INSERT: prepared, as the hand-written inbox's (through the transaction's pg client);
  // `textLedger`: as text through `tx.query` (parsed and planned every time), as before 2026-11-26.
  const work = async (tx, rows) => {
    const [row] = rows ?? (await tx.query(claimSql, [key(), 259_200_000]));
    const inserted = sql.claim ? row?.inserted === true : row?.locked === true && Number(row.inserted) === 1;
    if (!inserted) throw new Error('the claim did not insert');
    if (textLedger) await tx.query(LEDGER.text, [lastKey, 100]);
    else await tx.client.query({ ...LEDGER, values: [lastKey, 100] });
  };
  let lastKey;
  const key = () => (lastKey = `evt_${randomUUID()}:handler`);
  const deliver = fused
    ? () => fused({ text: claimSql, values: [key(), 259_200_000] }, work)
    : () => runner.run((tx) => work(tx));
  return { deliver, pids: [pid], exchanges: () => counter.exchanges, close: () => pool.end() };
}

async function handInboxVariant(url) {
  const { pool, counter, pid } = await countingPool(url);
  await pool.query(HAND_INBOX_SQL);
  return {
    deliver: async () => {
      if (!(await handInbox(pool, `evt_${randomUUID()}`))) throw new Error('the dedupe row was not inserted');
    },
    pids: [pid],
    exchanges: () => counter.exchanges,
    close: () => pool.end(),
  };
}

async function oursStore(lib, client, pids) {
  const { RedisIdempotencyStore } = await import(lib);
  const store = new RedisIdempotencyStore(client, { keyPrefix: `bench-engines-${process.pid}:` });
  return {
    deliver: async () => {
      const key = `evt_${randomUUID()}:handler`;
      const claim = await store.claim(key, 60_000);
      if (claim.status !== 'claimed') throw new Error(`claim: ${claim.status}`);
      await store.complete(key, claim.token, 259_200_000);
    },
    pids,
  };
}

function handClusterVariant(cluster, pids) {
  const run = handClaim(cluster, `bench-engines-hand-${process.pid}:`);
  return {
    deliver: async () => {
      if ((await run(`evt_${randomUUID()}`, () => undefined)) !== 'done') throw new Error('the claim was not granted');
    },
    pids,
  };
}

// ---- engines ----------------------------------------------------------------------------------------
const lib = libUrl(args.lib);
const beforeLib = args['before-lib'] ? libUrl(args['before-lib']) : undefined;
const want = (id) => !only || only.has(id);
const database = await createBenchDatabase(`engines-${process.pid}-${Date.now()}`);
// The database createBenchDatabase made (its pool knows it): the variants open their own connections to it.
const { rows: dbRows } = await database.pool.query('SELECT current_database() AS name');
const url = new URL(process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
url.pathname = `/${dbRows[0].name}`;
await database.pool.query(BENCH_LEDGER_SQL);
const redisPlain = await startRedis({ port: 6393, persistence: 'none' });
const redisAof = await startRedis({ port: 6394, persistence: 'aof' });
const cluster = await startCluster({ ports: [7221, 7222, 7223] });
const clusterNodes = cluster.nodes.split(',').map((n) => ({ host: '127.0.0.1', port: Number(n.split(':')[1]) }));
const clients = [];
const newCluster = () => {
  const c = new Cluster(clusterNodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  clients.push(c);
  return c;
};
const newRedis = (port) => {
  const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
  clients.push(c);
  return c;
};

const variants = {};
try {
  if (want('ours-inbox')) variants['ours-inbox'] = await oursInbox(lib, url.toString());
  if (want('ours-inbox-text-ledger'))
    variants['ours-inbox-text-ledger'] = await oursInbox(lib, url.toString(), { textLedger: true });
  if (beforeLib && want('ours-inbox-before'))
    variants['ours-inbox-before'] = await oursInbox(beforeLib, url.toString());
  if (want('hand-inbox')) variants['hand-inbox'] = await handInboxVariant(url.toString());
  if (want('ours-cluster')) variants['ours-cluster'] = await oursStore(lib, newCluster(), cluster.pids);
  if (want('hand-cluster')) variants['hand-cluster'] = handClusterVariant(newCluster(), cluster.pids);
  if (want('ours-redis')) variants['ours-redis'] = await oursStore(lib, newRedis(6393), redisPlain.pids);
  if (want('ours-redis-aof')) variants['ours-redis-aof'] = await oursStore(lib, newRedis(6394), redisAof.pids);

  const runs = Object.fromEntries(Object.keys(variants).map((id) => [id, []]));
  const ids = Object.keys(variants);
  const startedAt = new Date();
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[(i + r) % ids.length];
      const v = variants[id];
      const result = await measure(v.deliver, v.pids, v.exchanges);
      runs[id].push(result);
      console.log(
        `round ${r + 1} ${id.padEnd(18)} receiver ${result.receiverCpuUs.toFixed(0).padStart(5)} µs  engine ${result.engineCpuUs.toFixed(0).padStart(5)} µs  ` +
          `wall ${result.wallUs.toFixed(0).padStart(6)} µs  exchanges ${result.exchanges?.toFixed(2) ?? '—'}  (load ${loadavg()[0].toFixed(1)})`,
      );
    }
  }
  const summary = Object.fromEntries(
    ids.map((id) => [
      id,
      {
        receiverCpuUs: round(median(runs[id].map((x) => x.receiverCpuUs)), 1),
        engineCpuUs: round(median(runs[id].map((x) => x.engineCpuUs)), 1),
        wallUs: round(median(runs[id].map((x) => x.wallUs)), 0),
        deliveriesPerSecond: round(1e6 / median(runs[id].map((x) => x.wallUs)), 0),
        exchanges: runs[id][0].exchanges === null ? null : round(median(runs[id].map((x) => x.exchanges)), 2),
        perRound: runs[id].map((x) =>
          Object.fromEntries(Object.entries(x).map(([k, v]) => [k, v === null ? null : round(v, 1)])),
        ),
      },
    ]),
  );
  const q = (a, b, field) => (summary[a] && summary[b] ? round(summary[a][field] / summary[b][field], 3) : null);
  const output = {
    date: startedAt.toISOString(),
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      loadAverageAtStart: loadavg().map((l) => round(l, 2)),
    },
    config: { deliveries, rounds, warmup: 200, sequential: true, lib: args.lib, beforeLib: args['before-lib'] ?? null },
    variants: summary,
    ratios: {
      // Throughput of one sequential delivery path (1 / wall time), ours over the hand-written anchor.
      inboxVsHandWritten: q('hand-inbox', 'ours-inbox', 'wallUs'),
      inboxVsHandWrittenExchanges: q('ours-inbox', 'hand-inbox', 'exchanges'),
      inboxVsHandWrittenPostgresCpu: q('ours-inbox', 'hand-inbox', 'engineCpuUs'),
      inboxVsHandWrittenReceiverCpu: q('ours-inbox', 'hand-inbox', 'receiverCpuUs'),
      inboxAfterVsBefore: q('ours-inbox-before', 'ours-inbox', 'wallUs'),
      inboxAfterVsBeforePostgresCpu: q('ours-inbox', 'ours-inbox-before', 'engineCpuUs'),
      clusterVsHandWritten: q('hand-cluster', 'ours-cluster', 'wallUs'),
      clusterVsHandWrittenReceiverCpu: q('ours-cluster', 'hand-cluster', 'receiverCpuUs'),
      clusterVsHandWrittenEngineCpu: q('ours-cluster', 'hand-cluster', 'engineCpuUs'),
      redisAofVsNone: q('ours-redis', 'ours-redis-aof', 'wallUs'),
      redisAofVsNoneEngineCpu: q('ours-redis-aof', 'ours-redis', 'engineCpuUs'),
    },
  };
  // The same ratios taken round by round (the two variants measured minutes apart at most, as neighbours
  // in the rotation), then the median: on a shared machine whose speed drifts between rounds these move
  // less than the ratios of medians above.
  const paired = (a, b, field) => {
    if (!runs[a] || !runs[b]) return null;
    return round(median(runs[a].map((x, i) => x[field] / runs[b][i][field])), 3);
  };
  output.pairedRatios = {
    inboxVsHandWrittenPostgresCpu: paired('ours-inbox', 'hand-inbox', 'engineCpuUs'),
    inboxVsHandWrittenReceiverCpu: paired('ours-inbox', 'hand-inbox', 'receiverCpuUs'),
    inboxVsHandWrittenWall: paired('ours-inbox', 'hand-inbox', 'wallUs'),
    inboxTextLedgerVsHandWrittenPostgresCpu: paired('ours-inbox-text-ledger', 'hand-inbox', 'engineCpuUs'),
    inboxBeforeVsHandWrittenPostgresCpu: paired('ours-inbox-before', 'hand-inbox', 'engineCpuUs'),
    inboxAfterVsBeforePostgresCpu: paired('ours-inbox', 'ours-inbox-before', 'engineCpuUs'),
    inboxAfterVsBeforeReceiverCpu: paired('ours-inbox', 'ours-inbox-before', 'receiverCpuUs'),
  };
  writeFileSync(args.out, `${JSON.stringify(output, null, 2)}\n`);
  console.log(JSON.stringify(output.pairedRatios, null, 2));
  console.log(JSON.stringify(output.ratios, null, 2));
  console.log(`Wrote ${args.out}`);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  for (const v of Object.values(variants)) await v.close?.();
  for (const c of clients) c.disconnect();
  await Promise.all([redisPlain.stop(), redisAof.stop(), cluster.stop()]);
  await database.drop();
}
