#!/usr/bin/env node
/**
 * The durable paths against hand-written anchors, per delivery and without HTTP (issue 31, item 2;
 * issue 40): CPU time (not req/s, which a shared machine moves by 10x) of this process and of the
 * bench's own engine processes only, and the exchanges each delivery makes. Sequential, one delivery at
 * a time, so each figure is the cost of one delivery's path; variants interleaved over rounds, medians
 * reported, and ratios as the median of the round-by-round ratios (`pairedRatios`).
 *
 * Two store APIs, chosen by the variant (never sniffed from the lib): the variants on `--lib` use the
 * record API of issue 40 (`claim(key, { slot, eventId, leaseMs })`, `complete(key, { slot, token,
 * eventId, retentionMs })`, a record `i:<intent id>` and the slot `succeeded|<handler>`, as the
 * dispatcher makes them for a `payment_intent.succeeded`); the `*-before` variants on `--before-lib` use
 * the one-key API of 599366d and earlier (`claim(key, leaseMs)`, `complete(key, token, retentionMs)`, one
 * key `evt_<id>:<handler>`): the "one-key delivery" anchors of issue 40.
 *
 *   inbox (PostgreSQL at PG_URL, a database of its own, one pooled connection, its backend's pid read
 *   from pg_backend_pid()):
 *     ours-inbox          the default store's claim (MemoryIdempotencyStore), then pgTransactionRunner with
 *                         the inbox claim (PaymentsInbox's statement, prepared), the ledger INSERT
 *                         (prepared, as the hand-written one's), COMMIT: BEGIN sent with the claim; then
 *                         the store's completion (the current lib, `--lib`)
 *     ours-inbox-text-ledger  the same with the ledger INSERT sent as text through `tx.query`
 *     ours-inbox-before   the same as ours-inbox on `--before-lib`, its one-key API and 2-parameter claim
 *     hand-inbox          bench/lib/hand-inbox.js: what an expert writes with pg
 *   store on PostgreSQL (the same database, one pooled connection, statements counted):
 *     ours-postgres       PostgresIdempotencyStore claim + complete (default options: prepared, grouped)
 *     ours-postgres-before  the same store of `--before-lib`, one key (its own table)
 *   claim (a private 3-master Redis Cluster, its pids; EVALSHA/EVAL counted by INFO commandstats):
 *     ours-cluster        RedisIdempotencyStore.claim then complete (ioredis Cluster)
 *     ours-cluster-before the same on `--before-lib`, one key
 *     hand-cluster        bench/lib/hand-claim.js: the one-key claim and completion written by hand
 *                         (two scripts through defineCommand)
 *   persistence (private single redis-server instances; commands counted as on the Cluster):
 *     ours-redis          RedisIdempotencyStore claim + complete, `appendonly no`, `save ""`
 *     ours-redis-before   the same on `--before-lib`, one key
 *     ours-redis-aof      ours-redis with `appendonly yes`, `appendfsync everysec`
 *
 *   node bench/engines.bench.js [--deliveries 1000] [--rounds 3] [--lib DIR] [--before-lib DIR] [--only id,id]
 *                               [--out FILE]
 * Writes bench/results/engines.json by default; run.js copies its ratios and the commands and statements
 * per delivery into latest.json.
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

/** The handler of every variant, and the event type of the bench's deliveries (`payment_intent.succeeded`). */
const HANDLER_ID = 'PaymentHandlers.onSucceeded';
const SLOT = `succeeded|${HANDLER_ID}`;
const LEASE_MS = 300_000;
const RETENTION_MS = 259_200_000;

/**
 * What one delivery hands the store, in the API of the variant's lib: `record` (issue 40: the intent's
 * record `i:<intent id>`, the slot `succeeded|<handler>`, the event id), or `key` (599366d and earlier:
 * one key per event and handler).
 */
function storeCalls(store, api) {
  if (api === 'key') {
    return {
      claim: () => {
        const key = `evt_${randomUUID()}:${HANDLER_ID}`;
        return withClaim(store.claim(key, LEASE_MS), (claim) => ({ key, claim }));
      },
      complete: ({ key, claim }) => store.complete(key, claim.token, RETENTION_MS),
    };
  }
  return {
    claim: () => {
      // As eventRecordOf makes it for the unnamed instance: ['', 'i:', id].join('').
      const key = ['', 'i:', randomUUID()].join('');
      const eventId = randomUUID();
      return withClaim(store.claim(key, { slot: SLOT, eventId, leaseMs: LEASE_MS }), (claim) => ({
        key,
        eventId,
        claim,
      }));
    },
    complete: ({ key, eventId, claim }) =>
      store.complete(key, { slot: SLOT, token: claim.token, eventId, retentionMs: RETENTION_MS }),
  };
}

/** `then` on a Pending (a promise, or the value at once as the memory store answers). */
function withClaim(pending, next) {
  const check = (claim) => {
    if (claim.status !== 'claimed') throw new Error(`claim: ${claim.status}`);
    return next(claim);
  };
  return typeof pending?.then === 'function' ? pending.then(check) : check(pending);
}

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

/**
 * Runs `deliver` `deliveries` times; CPU of this process and of `pids`, per delivery, and what
 * `counters()` counts (statements, Redis commands), per delivery.
 */
async function measure(deliver, pids, counters) {
  for (let i = 0; i < 200; i++) await deliver(); // warm-up
  const countsBefore = counters ? await counters() : undefined;
  const ownBefore = process.cpuUsage();
  const engineBefore = enginesCpuUs(pids);
  const started = performance.now();
  for (let i = 0; i < deliveries; i++) await deliver();
  const wallUs = (performance.now() - started) * 1000;
  const own = process.cpuUsage(ownBefore);
  const engineCpuUs = (enginesCpuUs(pids) - engineBefore) / deliveries;
  const countsAfter = counters ? await counters() : undefined;
  const perDelivery = countsAfter
    ? Object.fromEntries(
        Object.keys(countsAfter).map((k) => [k, (countsAfter[k] - (countsBefore[k] ?? 0)) / deliveries]),
      )
    : {};
  // Redis only: the commands the scripts ran, by name, per delivery.
  const commandsByName = Object.fromEntries(
    Object.entries(perDelivery)
      .filter(([k, value]) => k.startsWith('cmd:') && value > 0)
      .map(([k, value]) => [k.slice(4), Math.round(value * 100) / 100]),
  );
  return {
    receiverCpuUs: (own.user + own.system) / deliveries,
    engineCpuUs,
    wallUs: wallUs / deliveries,
    // PostgreSQL only: `client.query` calls (one exchange each).
    exchanges: perDelivery.exchanges ?? null,
    // Redis only (INFO commandstats of the bench's own servers, summed over the Cluster's masters): the
    // scripts a delivery runs (EVALSHA, and EVAL after a NOSCRIPT), the commands those scripts ran inside,
    // and Redis's own time in the scripts (`usec` of cmdstat_evalsha + cmdstat_eval).
    scripts: perDelivery.scripts ?? null,
    commandsInScripts: perDelivery.inner ?? null,
    redisScriptUs: perDelivery.scriptUsec ?? null,
    commandsByName: Object.keys(commandsByName).length > 0 ? commandsByName : null,
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
  const { rows } = await pool.query('SELECT pid FROM (SELECT pg_backend_pid() AS pid) p');
  return { pool, counter, pid: Number(rows[0].pid), counters: async () => ({ exchanges: counter.exchanges }) };
}

/**
 * Redis commands, from INFO commandstats of the servers on `ports` (its own connections, so what the
 * variant's client sends is all that moves besides this INFO): `scripts` = EVALSHA + EVAL calls,
 * `scriptUsec` their Redis time, `inner` every other command except the bookkeeping of clients
 * (INFO, CLUSTER, PING, COMMAND, CLIENT, HELLO, SELECT, READONLY): the calls the scripts made.
 */
function redisCounter(ports) {
  const nodes = ports.map((port) => new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 }));
  const skip = /^(info|cluster|ping|command|client|hello|select|readonly|config)(\||$)/;
  const counters = async () => {
    const total = { scripts: 0, scriptUsec: 0, inner: 0 };
    for (const node of nodes) {
      const text = await node.info('commandstats');
      for (const [, name, calls, usec] of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
        if (name === 'evalsha' || name === 'eval') {
          total.scripts += Number(calls);
          total.scriptUsec += Number(usec);
        } else if (!skip.test(name)) {
          total.inner += Number(calls);
          total[`cmd:${name}`] = (total[`cmd:${name}`] ?? 0) + Number(calls);
        }
      }
    }
    return total;
  };
  return { counters, close: () => nodes.forEach((n) => n.disconnect()) };
}

/** The handler's effect in every inbox variant: the hand-written inbox's ledger INSERT, prepared. */
const LEDGER = BENCH_LEDGER_INSERT;

/**
 * ours: a delivery of the inbox scenario (a transactional handler, the default memory store) as the
 * dispatcher runs it: the store's claim, the inbox transaction as PaymentsInbox runs it (claim, then the
 * handler's INSERT), the store's completion; on `lib`, in its API (`api`: 'record' or 'key').
 */
async function oursInbox(lib, url, { textLedger = false, api = 'record' } = {}) {
  const { MemoryIdempotencyStore, pgTransactionRunner } = await import(lib);
  const { paymentsInboxSchema } = await import(new URL('webhooks/transactional/payments-inbox.js', lib).href);
  const { preparePgStatement } = await import(new URL('webhooks/transactional/pg-transaction.runner.js', lib).href);
  const first = await import(new URL('webhooks/transactional/pg-first-statement.js', lib).href).catch(() => undefined);
  const sqlModule = await import(new URL('webhooks/transactional/payments-inbox.sql.js', lib).href).catch(
    () => undefined,
  );
  const { pool, counters, pid } = await countingPool(url);
  const table = api === 'key' ? 'bench_inbox_before' : 'bench_inbox';
  await pool.query(paymentsInboxSchema(table));
  // PaymentsInbox's claim on the table above: the lib's own statements (payments-inbox.sql.ts), or, for a
  // lib from before that file (3723d8e and earlier), the one statement it sent, written out here.
  const sql = sqlModule?.paymentsInboxSql(table) ?? {
    claimFlags: `WITH l AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked),
ins AS (
  INSERT INTO "${table}" AS r (key, completed_at, expires_at)
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
  const store = storeCalls(new MemoryIdempotencyStore(), api);
  // The inbox claim's values: issue 40's (`<record key>/<slot>`, the event id, retention, a token, whether
  // the state recurs) or the one-key API's (key, retention).
  const claimValues = (run) =>
    api === 'key'
      ? [run.key, RETENTION_MS]
      : [`${run.key}/${SLOT}`, run.eventId, RETENTION_MS, randomUUID(), SLOT.startsWith('requires_')];
  const runs = (row) =>
    api === 'key'
      ? sql.claim
        ? row?.inserted === true
        : row?.locked === true && Number(row.inserted) === 1
      : row?.runs === true;
  // The handler's INSERT: prepared, as the hand-written inbox's (through the transaction's pg client);
  // `textLedger`: as text through `tx.query` (parsed and planned every time), as before 2026-11-26.
  const work = (run) => async (tx, rows) => {
    const [row] = rows ?? (await tx.query(claimSql, claimValues(run)));
    if (!runs(row)) throw new Error('the inbox claim did not run the handler');
    if (textLedger) await tx.query(LEDGER.text, [run.key, 100]);
    else await tx.client.query({ ...LEDGER, values: [run.key, 100] });
  };
  const deliver = async () => {
    const run = await store.claim();
    if (fused) await fused({ text: claimSql, values: claimValues(run) }, work(run));
    else await runner.run((tx) => work(run)(tx));
    await store.complete(run);
  };
  return { deliver, pids: [pid], counters, close: () => pool.end() };
}

async function handInboxVariant(url) {
  const { pool, counters, pid } = await countingPool(url);
  await pool.query(HAND_INBOX_SQL);
  return {
    deliver: async () => {
      if (!(await handInbox(pool, `evt_${randomUUID()}`))) throw new Error('the dedupe row was not inserted');
    },
    pids: [pid],
    counters,
    close: () => pool.end(),
  };
}

/** The Redis store's claim and completion (one delivery, one handler), in the lib's API. */
async function oursRedisStore(lib, client, pids, ports, api) {
  const { RedisIdempotencyStore } = await import(lib);
  const store = storeCalls(
    new RedisIdempotencyStore(client, { keyPrefix: `bench-engines-${api}-${process.pid}:` }),
    api,
  );
  const counter = redisCounter(ports);
  return {
    deliver: async () => store.complete(await store.claim()),
    pids,
    counters: counter.counters,
    close: counter.close,
  };
}

/** The PostgreSQL store's claim and completion on its own table, statements counted, in the lib's API. */
async function oursPostgresStore(lib, url, api) {
  const { PostgresIdempotencyStore } = await import(lib);
  const { pool, counters, pid } = await countingPool(url);
  const table = api === 'key' ? 'bench_idempotency_before' : 'bench_idempotency';
  const store = storeCalls(new PostgresIdempotencyStore(pool, { table }), api);
  return {
    deliver: async () => store.complete(await store.claim()),
    pids: [pid],
    counters,
    close: () => pool.end(),
  };
}

function handClusterVariant(cluster, pids, ports) {
  const run = handClaim(cluster, `bench-engines-hand-${process.pid}:`);
  const counter = redisCounter(ports);
  return {
    deliver: async () => {
      if ((await run(`evt_${randomUUID()}`, () => undefined)) !== 'done') throw new Error('the claim was not granted');
    },
    pids,
    counters: counter.counters,
    close: counter.close,
  };
}

// ---- engines ----------------------------------------------------------------------------------------
const lib = libUrl(args.lib);
const beforeLib = args['before-lib'] ? libUrl(args['before-lib']) : undefined;
const want = (id) => (!only || only.has(id)) && (!id.endsWith('-before') || beforeLib !== undefined);
const database = await createBenchDatabase(`engines-${process.pid}-${Date.now()}`);
// The database createBenchDatabase made (its pool knows it): the variants open their own connections to it.
const { rows: dbRows } = await database.pool.query('SELECT current_database() AS name');
const url = new URL(process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
url.pathname = `/${dbRows[0].name}`;
await database.pool.query(BENCH_LEDGER_SQL);
const redisPlain = await startRedis({ port: 6393, persistence: 'none' });
const redisAof = await startRedis({ port: 6394, persistence: 'aof' });
const clusterPorts = [7221, 7222, 7223];
const cluster = await startCluster({ ports: clusterPorts });
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
  const pgUrl = url.toString();
  if (want('ours-inbox')) variants['ours-inbox'] = await oursInbox(lib, pgUrl);
  if (want('ours-inbox-text-ledger'))
    variants['ours-inbox-text-ledger'] = await oursInbox(lib, pgUrl, { textLedger: true });
  if (want('ours-inbox-before')) variants['ours-inbox-before'] = await oursInbox(beforeLib, pgUrl, { api: 'key' });
  if (want('hand-inbox')) variants['hand-inbox'] = await handInboxVariant(pgUrl);
  if (want('ours-postgres')) variants['ours-postgres'] = await oursPostgresStore(lib, pgUrl, 'record');
  if (want('ours-postgres-before')) variants['ours-postgres-before'] = await oursPostgresStore(beforeLib, pgUrl, 'key');
  if (want('ours-cluster'))
    variants['ours-cluster'] = await oursRedisStore(lib, newCluster(), cluster.pids, clusterPorts, 'record');
  if (want('ours-cluster-before'))
    variants['ours-cluster-before'] = await oursRedisStore(beforeLib, newCluster(), cluster.pids, clusterPorts, 'key');
  if (want('hand-cluster')) variants['hand-cluster'] = handClusterVariant(newCluster(), cluster.pids, clusterPorts);
  if (want('ours-redis'))
    variants['ours-redis'] = await oursRedisStore(lib, newRedis(6393), redisPlain.pids, [6393], 'record');
  if (want('ours-redis-before'))
    variants['ours-redis-before'] = await oursRedisStore(beforeLib, newRedis(6393), redisPlain.pids, [6393], 'key');
  if (want('ours-redis-aof'))
    variants['ours-redis-aof'] = await oursRedisStore(lib, newRedis(6394), redisAof.pids, [6394], 'record');

  const runs = Object.fromEntries(Object.keys(variants).map((id) => [id, []]));
  const ids = Object.keys(variants);
  const startedAt = new Date();
  const loadAtStart = loadavg().map((l) => round(l, 2));
  const fmt = (value, digits = 2) => (value === null ? '—' : value.toFixed(digits));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[(i + r) % ids.length];
      const v = variants[id];
      const result = await measure(v.deliver, v.pids, v.counters);
      runs[id].push(result);
      console.log(
        `round ${r + 1} ${id.padEnd(22)} receiver ${result.receiverCpuUs.toFixed(0).padStart(5)} µs  engine ${result.engineCpuUs.toFixed(0).padStart(5)} µs  ` +
          `wall ${result.wallUs.toFixed(0).padStart(6)} µs  statements ${fmt(result.exchanges)}  scripts ${fmt(result.scripts)} ` +
          `(${fmt(result.commandsInScripts, 1)} commands in them, ${fmt(result.redisScriptUs, 1)} µs)  (load ${loadavg()[0].toFixed(1)})`,
      );
    }
  }
  const med = (id, field, digits) => {
    const values = runs[id].map((x) => x[field]);
    return values[0] === null ? null : round(median(values), digits);
  };
  const summary = Object.fromEntries(
    ids.map((id) => [
      id,
      {
        receiverCpuUs: med(id, 'receiverCpuUs', 1),
        engineCpuUs: med(id, 'engineCpuUs', 1),
        wallUs: med(id, 'wallUs', 0),
        deliveriesPerSecond: round(1e6 / median(runs[id].map((x) => x.wallUs)), 0),
        exchanges: med(id, 'exchanges', 2),
        scripts: med(id, 'scripts', 2),
        commandsInScripts: med(id, 'commandsInScripts', 2),
        redisScriptUs: med(id, 'redisScriptUs', 1),
        commandsByName: runs[id].at(-1).commandsByName,
        perRound: runs[id].map((x) =>
          Object.fromEntries(
            Object.entries(x)
              .filter(([k]) => k !== 'commandsByName')
              .map(([k, v]) => [k, v === null ? null : round(v, 1)]),
          ),
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
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadavg().map((l) => round(l, 2)),
    },
    config: { deliveries, rounds, warmup: 200, sequential: true, lib: args.lib, beforeLib: args['before-lib'] ?? null },
    variants: summary,
    // Issue 40: what one delivery sends (medians over the rounds; the Redis figures from the servers' own counts).
    perDelivery: {
      redisScripts: summary['ours-redis']?.scripts ?? null,
      redisClusterScripts: summary['ours-cluster']?.scripts ?? null,
      postgresStatements: summary['ours-postgres']?.exchanges ?? null,
      inboxStatements: summary['ours-inbox']?.exchanges ?? null,
    },
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
  // less than the ratios of medians above. `*Wall` ratios are throughput (anchor's wall time over ours:
  // > 1 is faster than the anchor); CPU ratios are ours over the anchor (> 1 spends more).
  const paired = (a, b, field) => {
    if (!runs[a] || !runs[b]) return null;
    return round(median(runs[a].map((x, i) => x[field] / runs[b][i][field])), 3);
  };
  output.pairedRatios = {
    inboxVsHandWritten: paired('hand-inbox', 'ours-inbox', 'wallUs'),
    inboxVsHandWrittenPostgresCpu: paired('ours-inbox', 'hand-inbox', 'engineCpuUs'),
    inboxVsHandWrittenReceiverCpu: paired('ours-inbox', 'hand-inbox', 'receiverCpuUs'),
    inboxVsHandWrittenWall: paired('ours-inbox', 'hand-inbox', 'wallUs'),
    inboxTextLedgerVsHandWrittenPostgresCpu: paired('ours-inbox-text-ledger', 'hand-inbox', 'engineCpuUs'),
    inboxBeforeVsHandWrittenPostgresCpu: paired('ours-inbox-before', 'hand-inbox', 'engineCpuUs'),
    inboxAfterVsBeforePostgresCpu: paired('ours-inbox', 'ours-inbox-before', 'engineCpuUs'),
    inboxAfterVsBeforeReceiverCpu: paired('ours-inbox', 'ours-inbox-before', 'receiverCpuUs'),
    clusterVsHandWritten: paired('hand-cluster', 'ours-cluster', 'wallUs'),
    clusterVsHandWrittenReceiverCpu: paired('ours-cluster', 'hand-cluster', 'receiverCpuUs'),
    clusterVsHandWrittenEngineCpu: paired('ours-cluster', 'hand-cluster', 'engineCpuUs'),
    clusterBeforeVsHandWritten: paired('hand-cluster', 'ours-cluster-before', 'wallUs'),
    // Issue 40: the record API against the one-key delivery of `--before-lib`, same engine, same run.
    redisVsOneKey: paired('ours-redis-before', 'ours-redis', 'wallUs'),
    redisVsOneKeyEngineCpu: paired('ours-redis', 'ours-redis-before', 'engineCpuUs'),
    redisVsOneKeyReceiverCpu: paired('ours-redis', 'ours-redis-before', 'receiverCpuUs'),
    clusterVsOneKey: paired('ours-cluster-before', 'ours-cluster', 'wallUs'),
    clusterVsOneKeyEngineCpu: paired('ours-cluster', 'ours-cluster-before', 'engineCpuUs'),
    postgresVsOneKey: paired('ours-postgres-before', 'ours-postgres', 'wallUs'),
    postgresVsOneKeyEngineCpu: paired('ours-postgres', 'ours-postgres-before', 'engineCpuUs'),
    postgresVsOneKeyReceiverCpu: paired('ours-postgres', 'ours-postgres-before', 'receiverCpuUs'),
  };
  writeFileSync(args.out, `${JSON.stringify(output, null, 2)}\n`);
  console.log(JSON.stringify(output.perDelivery, null, 2));
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
