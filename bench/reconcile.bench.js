/**
 * Reconciliation at scale (issue 31, item 4): the sweeper of one instance over a backlog of 10k, 100k
 * and 1M watched intents on the memory, Redis and PostgreSQL watch stores. Not part of `npm run bench`
 * (nor `--quick`, nor CI): several minutes, a private redis-server and a table of its own.
 *
 *   npx tsc -p tsconfig.sample.json && node --expose-gc bench/reconcile.bench.js [--sizes 10000,100000,1000000]
 *       [--stores memory,redis,postgres] [--latency-seconds 20] [--ceiling-seconds 5] [--redis-port 6391]
 *       [--out FILE]  (default bench/results/reconcile.json) [--lib DIR]  (default dist-sample/lib)
 *
 * Per store and size, on the compiled lib (dist-sample/lib), through the real PaymentsReconciler:
 *   1. store size per watched intent (see bench/lib/reconcile-stores.js for how each is measured);
 *   2. at the defaults (5 retrieves/s, batches of 100, concurrency 5): checks/s, while a new intent is
 *      watched every 250 ms for `--latency-seconds`, each due at once (afterSeconds 0), then on until
 *      each was checked: its first-check latency (watched -> its retrieve sent), p50/p99/max;
 *   3. the ceiling: the same sweeper with maxRetrievesPerSecond 1000 (the pace is kept in whole ms) and 32 in flight for
 *      `--ceiling-seconds`: checks/s the store and the sweep sustain, and CPU per check (this process;
 *      the engine's process: redis-server, or the PostgreSQL backends of the pool).
 * The retrieves are answered by an in-process client stub: 'processing' (never terminal, so every check
 * reschedules its intent) after 2 ms on a timer; no HTTP, so CPU per check is the sweep's and the store's.
 * Sweeps are chained as the module chains them under a backlog (the next starts when a full batch ends).
 * Writes bench/results/reconcile.json; charts: node bench/reconcile-charts.js.
 */
import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { pidCpuMs, memoryStore, postgresStore, redisStore } from './lib/reconcile-stores.js';

if (typeof globalThis.gc !== 'function') {
  // The memory figure needs a full GC: run again with --expose-gc.
  const child = spawnSync(process.execPath, ['--expose-gc', ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    stores: { type: 'string', default: 'memory,redis,postgres' },
    'latency-seconds': { type: 'string', default: '20' },
    'ceiling-seconds': { type: 'string', default: '5' },
    'redis-port': { type: 'string', default: '6391' },
    out: { type: 'string' },
    lib: { type: 'string' },
  },
});
const root = new URL('..', import.meta.url).pathname;
const dist = args.lib
  ? new URL(`${args.lib.replace(/\/$/, '')}/`, `file://${process.cwd()}/`).pathname
  : `${root}dist-sample/lib/`;
const { Logger } = await import('@nestjs/common');
Logger.overrideLogger(['error']);
const lib = {
  ...(await import(`${dist}index.js`)),
  ...(await import(`${dist}webhooks/index.js`)),
  ...(await import(`${dist}webhooks/reconcile/payments-reconciler.js`)),
  ...(await import(`${dist}payments-options.validator.js`)),
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const runtime = { now: () => Date.now(), sleep, random: Math.random };
const percentile = (values, p) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const round = (value, digits = 1) => (value == null ? null : Number(value.toFixed(digits)));

/** The API client stub: every intent is 'processing'; notes when each watched-late intent was retrieved. */
function stubClient(sent) {
  const retrieve = async (id) => {
    if (!sent.has(id)) sent.set(id, Date.now());
    await sleep(2);
    return { id, state: 'processing', amount: 1000 };
  };
  return { paymentIntents: { retrieve }, setupIntents: { retrieve } };
}

function reconcilerOver(store, client, reconcile) {
  const options = lib.validatePaymentsOptions({
    apiKey: 'bench-key',
    environment: 'sandbox',
    baseUrl: 'https://sandbox.payments.test',
    webhooks: {
      verifier: lib.standardWebhooksVerifier({ secrets: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
      reconcile: { afterSeconds: 0, ...reconcile },
    },
  });
  const dispatcher = { dispatch: () => Promise.reject(new Error('no terminal state in this bench')) };
  return new lib.PaymentsReconciler(options.webhooks, store, dispatcher, client, runtime);
}

/**
 * Sweeps for `seconds` (calling `onTick` every 250 ms), then on until `done()` (at most as long again),
 * chained as under a backlog; resolves the checks done.
 */
async function sweepFor(reconciler, seconds, batchSize, onTick = () => undefined, done = () => true) {
  const until = Date.now() + seconds * 1000;
  let checked = 0;
  const ticker = setInterval(onTick, 250);
  const stopTicks = setTimeout(() => clearInterval(ticker), seconds * 1000);
  try {
    while (Date.now() < until || (!done() && Date.now() < until + 60_000)) {
      const result = await reconciler.sweep();
      checked += result.checked;
      if (!result.swept || result.stopped) throw new Error(`sweep: ${result.stopped ?? 'lease not held'}`);
      if (result.checked < batchSize) await sleep(100);
    }
  } finally {
    clearTimeout(stopTicks);
    clearInterval(ticker);
  }
  return checked;
}

async function measure(kind, size) {
  const now = Date.now();
  const opened =
    kind === 'memory'
      ? await memoryStore(lib, size, now)
      : kind === 'redis'
        ? await redisStore(lib, size, now, Number(args['redis-port']))
        : await postgresStore(lib, size, now, `payments_idempotency_reconcile_bench_${process.pid}`);
  try {
    // 2. At the defaults, a new intent every 250 ms.
    const sent = new Map();
    const watchedAt = new Map();
    const defaults = reconcilerOver(opened.store, stubClient(sent), {});
    const latencyS = Number(args['latency-seconds']);
    const started = Date.now();
    const atDefaults = await sweepFor(
      defaults,
      latencyS,
      100,
      () => {
        const id = randomUUID();
        watchedAt.set(id, Date.now());
        void defaults.watch('payment_intent', id);
      },
      () => [...watchedAt.keys()].every((id) => sent.has(id)),
    );
    const elapsedS = (Date.now() - started) / 1000;
    const latencies = [...watchedAt].filter(([id]) => sent.has(id)).map(([id, at]) => (sent.get(id) - at) / 1000);
    const unchecked = watchedAt.size - latencies.length;
    // 3. The ceiling.
    const fast = reconcilerOver(opened.store, stubClient(new Map()), {
      maxRetrievesPerSecond: 1000,
      maxConcurrentRetrieves: 32,
      batchSize: 500,
    });
    // The same process reconfigured: it holds the sweeper lease the first sweeper took.
    fast.owner = defaults.owner;
    const pids = [...opened.enginePids];
    const engineBefore = new Map(pids.map((pid) => [pid, pidCpuMs(pid)]));
    const cpuBefore = process.cpuUsage();
    const ceilingStart = Date.now();
    const ceilingChecks = await sweepFor(fast, Number(args['ceiling-seconds']), 500);
    const ceilingS = (Date.now() - ceilingStart) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const enginePids = opened.refreshPids ? await opened.refreshPids() : pids;
    const engineMs = enginePids.reduce((sum, pid) => sum + pidCpuMs(pid) - (engineBefore.get(pid) ?? 0), 0);
    return {
      size,
      bytesPerWatchedIntent: Math.round(opened.bytes / size),
      storeMB: round(opened.bytes / 1e6),
      defaults: {
        checksPerS: round(atDefaults / elapsedS, 2),
        newIntents: watchedAt.size,
        firstCheckP50S: round(percentile(latencies, 50), 2),
        firstCheckP99S: round(percentile(latencies, 99), 2),
        firstCheckMaxS: round(Math.max(...latencies), 2),
        newIntentsUncheckedAtEnd: unchecked,
      },
      ceiling: {
        checksPerS: round(ceilingChecks / ceilingS),
        cpuUsPerCheck: round(((cpu.user + cpu.system) / ceilingChecks) * 1, 1),
        engineCpuUsPerCheck: kind === 'memory' ? 0 : round((engineMs * 1000) / ceilingChecks, 1),
      },
    };
  } finally {
    await opened.close();
  }
}

const results = {
  date: new Date().toISOString(),
  machine: {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    loadAverageAtStart: os.loadavg().map((l) => round(l, 2)),
  },
  versions: { node: process.version },
  method:
    'in-process client stub answering processing after 2 ms; defaults: 5 retrieves/s, batch 100, 5 in flight, a new intent every 250 ms due at once; ceiling: 1000/s (the most the 1 ms pacing gap expresses), 32 in flight, batch 500',
  config: { latencySeconds: Number(args['latency-seconds']), ceilingSeconds: Number(args['ceiling-seconds']) },
  stores: {},
};
const begun = Date.now();
for (const kind of args.stores.split(',')) {
  results.stores[kind] = {};
  for (const size of args.sizes.split(',').map(Number)) {
    process.stdout.write(`${kind} ${size}: `);
    const figures = await measure(kind, size);
    results.stores[kind][size] = figures;
    console.log(JSON.stringify(figures));
  }
}
results.durationS = Math.round((Date.now() - begun) / 1000);
results.machine.loadAverageAtEnd = os.loadavg().map((l) => round(l, 2));
mkdirSync(`${root}bench/results`, { recursive: true });
const outFile = args.out ?? `${root}bench/results/reconcile.json`;
writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
console.log(`Wrote ${outFile} (${results.durationS} s)`);
process.exit(0);
