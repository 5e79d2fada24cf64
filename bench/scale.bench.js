/**
 * Scale benchmark (issue 22, items 4 and 5): queued mode (BullMQ) on a single Redis and on a 3-master
 * Redis Cluster, and several receiver instances behind a round-robin proxy. Loopback only, bounded
 * phases; writes bench/results/scale.json (charts: node bench/scale-charts.js).
 *
 *   node bench/scale.bench.js [--duration S] [--warmup S] [--connections N] [--events N] [--concurrency N]
 *
 * 1. queued.{redis,cluster}.enqueue: answer latency (p50/p99) and req/s of a receiver that only
 *    enqueues (worker: false), next to queued.inlineMemory (inline, memory store) in the same run.
 * 2. queued.{redis,cluster}.workers['1'|'2']: a receiver enqueues `events` signed deliveries, 1 or 2
 *    worker-only processes consume the queue; handled/s = events / (first send -> last handler run).
 *    Every accepted event must be handled exactly once (event ids compared across the workers).
 * 3. instances['1'|'2'|'3']: 1-3 inline receivers on the Redis store behind a node:http round-robin
 *    proxy (its own process), deliveries/s through the proxy; then a sample of the delivered events is
 *    delivered again through the proxy (so to other instances): no handler may run again.
 * Needs dist-sample/ (npx tsc -p tsconfig.sample.json), Redis on 127.0.0.1:6379 and the cluster on
 * 127.0.0.1:7101-7103 (bash .ci/redis-cluster.sh). Every key it creates contains `scale-<runId>` and
 * is removed at the end.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { WEBHOOK_PATH } from './lib/bench-constants.js';
import { loadRun } from './lib/load-run.js';
import { packageVersion } from './lib/package-version.js';
import { clusterReady, deleteRunKeys, openQueue, queueCounts } from './lib/scale-redis.js';
import { ScenarioProcess, removeScenarioLogs } from './lib/scenario-process.js';
import { DeliveryPool, signedDelivery } from './lib/signed-payloads.js';
import { removeWrkFiles, wrkAvailable, wrkRun, wrkVersion } from './lib/wrk-run.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    events: { type: 'string' },
    concurrency: { type: 'string' },
  },
});
const config = {
  durationS: Number(args.duration ?? 6),
  warmupS: Number(args.warmup ?? 2),
  connections: Number(args.connections ?? 16),
  /** Deliveries of one end-to-end (enqueue -> handled) run. */
  events: Number(args.events ?? 3000),
  /** Warm-up deliveries of an end-to-end run (handled before the measured ones). */
  warmupEvents: 300,
  /** Jobs one worker process runs at once (BullMQ `concurrency`; the module's default is 1). */
  workerConcurrency: Number(args.concurrency ?? 8),
  /** Concurrent requests of the end-to-end sender and of the redelivery check. */
  senderConcurrency: 16,
  /** Already handled events delivered again through the proxy after each instances run. */
  redeliveries: 600,
};

const root = new URL('..', import.meta.url).pathname;
const runId = `${process.pid}-${Date.now()}`;
const marker = `scale-${runId}`;
const queuePrefix = `{${marker}}`;
const serverFile = new URL('./lib/scale-server.js', import.meta.url).pathname;
const proxyFile = new URL('./lib/scale-proxy.js', import.meta.url).pathname;
const loadTool = wrkAvailable() ? 'wrk' : 'autocannon';
const started = [];

const log = (line) => console.log(line);
const round = (value, digits = 1) => (value === undefined ? undefined : Number(value.toFixed(digits)));

async function start(options, file = serverFile) {
  const child = await ScenarioProcess.start({ file, options, cwd: root });
  started.push(child);
  return child;
}

async function stop(...children) {
  for (const child of children) {
    const code = await child.close();
    if (code.code !== 0) log(`  (a process exited with code ${code.code}, signal ${code.signal})`);
    started.splice(started.indexOf(child), 1);
  }
}

/** The event ids a scale-server process handled since its last mark. */
function handledIds(child) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(child.describeFailure("no 'ids' within 30 s"))), 30_000);
    const onMessage = (message) => {
      if (message?.type !== 'ids') return;
      clearTimeout(timer);
      child.child.off('message', onMessage);
      resolve(message.ids);
    };
    child.child.on('message', onMessage);
    child.child.send({ type: 'ids' });
  });
}

/** Handler runs, distinct events and duplicates over several processes (ids compared across them). */
async function exactlyOnce(children) {
  const seen = new Set();
  let runs = 0;
  const perProcess = [];
  for (const child of children) {
    const ids = await handledIds(child);
    runs += ids.length;
    perProcess.push(ids.length);
    for (const id of ids) seen.add(id.toLowerCase());
  }
  return { handlerRuns: runs, perProcess, distinctEvents: seen.size, duplicates: runs - seen.size, ids: seen };
}

/** One timed load run with wrk (when installed) or autocannon, as bench/run.js chooses. */
async function runLoad(options) {
  if (loadTool === 'wrk') {
    const result = await wrkRun(options);
    if (result) return result;
  }
  return loadRun(options);
}

function loadFigures(result) {
  return {
    rps: round(result.rps, 0),
    p50Ms: round(result.p50, 2),
    p99Ms: round(result.p99, 2),
    requests: result.requests,
    ok2xx: result.requests - result.non2xx,
    ok2xxPerS: round((result.requests - result.non2xx) / result.durationS, 0),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: round(result.durationS, 2),
  };
}

/** Sends `deliveries` to 127.0.0.1:`port` over `concurrency` keep-alive connections. */
async function sendAll(port, deliveries, concurrency = config.senderConcurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const statusCodes = {};
  let errors = 0;
  let next = 0;
  const one = (delivery) =>
    new Promise((resolve) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          path: WEBHOOK_PATH,
          method: 'POST',
          agent,
          headers: { ...delivery.headers, 'content-length': Buffer.byteLength(delivery.body) },
        },
        (response) => {
          response.resume();
          response.on('end', () => {
            statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
            resolve();
          });
        },
      );
      request.on('error', () => {
        errors++;
        resolve();
      });
      request.end(delivery.body);
    });
  const startedAt = performance.timeOrigin + performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < deliveries.length) await one(deliveries[next++]);
    }),
  );
  const endedAt = performance.timeOrigin + performance.now();
  agent.destroy();
  const ok2xx = Object.entries(statusCodes).reduce((sum, [code, n]) => sum + (code.startsWith('2') ? n : 0), 0);
  return { startedAt, endedAt, ok2xx, statusCodes, errors };
}

/** Accepted deliveries whose event id no process handled. */
function lostEvents(deliveries, handled) {
  let lost = 0;
  for (const d of deliveries) if (!handled.has(JSON.parse(d.body).id.toLowerCase())) lost++;
  return lost;
}

const pool = new DeliveryPool(() => signedDelivery(), 80_000);
const fresh = (count) => Array.from({ length: count }, () => signedDelivery());

/** 1a: answer latency and req/s of one receiver (no worker anywhere). */
async function receiverLoad(label, options, { queue } = {}) {
  const receiver = await start(options);
  try {
    pool.rewind();
    const load = { port: receiver.port, path: WEBHOOK_PATH, pool, connections: config.connections };
    const warm = await runLoad({ ...load, durationS: config.warmupS });
    await receiver.mark();
    const measured = await runLoad({ ...load, durationS: config.durationS });
    const report = await receiver.report();
    const figures = { ...loadFigures(measured), receiverCpuCores: round(report.cpuMs / report.wallMs, 2) };
    if (queue) {
      // Every 2xx (warm-up included) promises a job in the queue.
      const counts = await queueCounts(queue);
      const promised = measured.requests - measured.non2xx + warm.requests - warm.non2xx;
      figures.jobsQueued = counts.waiting + counts.active + counts.completed + counts.delayed;
      figures.jobsMissing = Math.max(0, promised - figures.jobsQueued);
    } else {
      figures.handlerRuns = report.handlerRuns;
    }
    log(
      `  ${label}: ${figures.rps} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ` +
        `${figures.non2xx} non-2xx${queue ? `, ${figures.jobsQueued} jobs queued, ${figures.jobsMissing} missing` : ''}`,
    );
    return figures;
  } finally {
    await stop(receiver);
  }
}

/** 1b: a receiver that enqueues, `workers` worker-only processes; time until every job is handled. */
async function endToEnd(redis, workers) {
  const queueName = `q-${redis}-${workers}w`;
  const queue = { name: queueName, prefix: queuePrefix, cluster: redis === 'cluster' };
  const common = {
    store: 'redis',
    redis,
    processing: 'queued',
    queueName,
    queuePrefix,
    storeKeyPrefix: `${marker}:idem:${queueName}:`,
  };
  const receiver = await start({ ...common, role: 'receiver' });
  const workerProcesses = [];
  try {
    for (let i = 0; i < workers; i++)
      workerProcesses.push(await start({ ...common, role: 'worker', concurrency: config.workerConcurrency }));
    const report = async () => Promise.all(workerProcesses.map((w) => w.report()));
    const waitHandled = async (target, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const reports = await report();
        const runs = reports.reduce((sum, r) => sum + r.handlerRuns, 0);
        if (runs >= target || Date.now() > deadline) return reports;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    // Warm-up: JIT, connections, the queue's scripts.
    const warm = await sendAll(receiver.port, fresh(config.warmupEvents));
    await waitHandled(warm.ok2xx, 30_000);
    for (const w of workerProcesses) await w.mark();
    await receiver.mark();

    const deliveries = fresh(config.events);
    const sent = await sendAll(receiver.port, deliveries);
    const reports = await waitHandled(sent.ok2xx, 60_000);
    // A little longer: a duplicate run would show up here.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lastHandledAt = Math.max(...reports.map((r) => r.extra.lastHandledAt));
    const once = await exactlyOnce(workerProcesses);
    const lost = lostEvents(deliveries, once.ids);
    const receiverReport = await receiver.report();
    const workerReports = await report();
    const seconds = (lastHandledAt - sent.startedAt) / 1000;

    // Backlog drain: the same number of jobs enqueued while the queue is paused, then resumed: the
    // workers' own rate, not bounded by how fast one receiver enqueues.
    const handle = await openQueue(queue);
    let drain;
    try {
      await handle.queue.pause();
      const backlog = fresh(config.events);
      const sentBacklog = await sendAll(receiver.port, backlog);
      const whilePaused = (await report()).reduce((sum, r) => sum + r.handlerRuns, 0) - once.handlerRuns;
      for (const w of workerProcesses) await w.mark();
      const resumedAt = performance.timeOrigin + performance.now();
      await handle.queue.resume();
      const drained = await waitHandled(sentBacklog.ok2xx, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const lastDrainedAt = Math.max(...drained.map((r) => r.extra.lastHandledAt));
      const drainOnce = await exactlyOnce(workerProcesses);
      const drainS = (lastDrainedAt - resumedAt) / 1000;
      drain = {
        accepted2xx: sentBacklog.ok2xx,
        handledWhilePaused: whilePaused,
        handled: drainOnce.distinctEvents,
        perWorker: drainOnce.perProcess,
        duplicates: drainOnce.duplicates,
        lost: lostEvents(backlog, drainOnce.ids),
        drainS: round(drainS, 3),
        handledPerS: round(drainOnce.distinctEvents / drainS, 0),
      };
    } finally {
      await handle.close();
    }
    const counts = await queueCounts(queue);
    const figures = {
      workers,
      workerConcurrency: config.workerConcurrency,
      events: config.events,
      accepted2xx: sent.ok2xx,
      statusCodes: sent.statusCodes,
      sendErrors: sent.errors,
      handled: once.distinctEvents,
      handlerRuns: once.handlerRuns,
      duplicates: once.duplicates,
      lost,
      lossless: once.distinctEvents === sent.ok2xx && once.duplicates === 0 && lost === 0,
      enqueueS: round((sent.endedAt - sent.startedAt) / 1000, 3),
      enqueuePerS: round(sent.ok2xx / ((sent.endedAt - sent.startedAt) / 1000), 0),
      endToEndS: round(seconds, 3),
      handledPerS: round(once.distinctEvents / seconds, 0),
      perWorker: once.perProcess,
      drain,
      queueCountsAtEnd: counts,
      cpuCores: {
        receiver: round(receiverReport.cpuMs / receiverReport.wallMs, 2),
        workers: workerReports.map((r) => round(r.cpuMs / r.wallMs, 2)),
      },
    };
    log(
      `  ${redis}, ${workers} worker(s): ${figures.handledPerS} handled/s (${figures.handled}/${figures.accepted2xx} in ` +
        `${figures.endToEndS} s; enqueue ${figures.enqueuePerS}/s), duplicates ${figures.duplicates}, lost ${figures.lost}, ` +
        `failed jobs ${counts.failed}\n` +
        `    backlog of ${drain.accepted2xx} drained at ${drain.handledPerS} handled/s (${drain.drainS} s; ` +
        `per worker ${drain.perWorker.join('+')}), duplicates ${drain.duplicates}, lost ${drain.lost}`,
    );
    return figures;
  } finally {
    await stop(...workerProcesses, receiver);
  }
}

/** 2: `count` inline receivers on the Redis store behind the round-robin proxy. */
async function instances(count) {
  const storeKeyPrefix = `${marker}:idem:instances-${count}:`;
  const receivers = [];
  let proxy;
  try {
    for (let i = 0; i < count; i++)
      receivers.push(await start({ role: 'receiver', store: 'redis', redis: 'single', storeKeyPrefix }));
    proxy = await start({ targets: receivers.map((r) => r.port) }, proxyFile);
    pool.rewind();
    const load = { port: proxy.port, path: WEBHOOK_PATH, pool, connections: config.connections };
    await runLoad({ ...load, durationS: config.warmupS });
    for (const child of [...receivers, proxy]) await child.mark();
    const firstMeasured = pool.cursor;
    const measured = await runLoad({ ...load, durationS: config.durationS });
    const reports = await Promise.all(receivers.map((r) => r.report()));
    const proxyReport = await proxy.report();
    const once = await exactlyOnce(receivers);
    // The same events again, through the proxy: round-robin sends most to another instance than the first time.
    // Only events already handled (the measured ones, not those cut off in flight when the load stopped).
    const again = pool.items
      .slice(firstMeasured, Math.min(pool.cursor, pool.items.length))
      .filter((d) => once.ids.has(JSON.parse(d.body).id.toLowerCase()))
      .slice(0, config.redeliveries);
    const redelivered = await sendAll(proxy.port, again);
    const after = await exactlyOnce(receivers);
    const figures = {
      processes: count,
      ...loadFigures(measured),
      handlerRunsPerProcess: once.perProcess,
      handlerRuns: once.handlerRuns,
      distinctEvents: once.distinctEvents,
      duplicates: once.duplicates,
      // Requests in flight when the load stopped may be handled without their answer being counted.
      handledMinus2xx: once.distinctEvents - (measured.requests - measured.non2xx),
      exactlyOnce: once.duplicates === 0,
      redelivery: {
        sent: again.length,
        ok2xx: redelivered.ok2xx,
        newHandlerRuns: after.handlerRuns - once.handlerRuns,
        duplicates: after.duplicates,
      },
      proxy: { forwarded: proxyReport.extra.forwarded, errors: proxyReport.extra.proxyErrors },
      cpuCores: {
        receivers: reports.map((r) => round(r.cpuMs / r.wallMs, 2)),
        proxy: round(proxyReport.cpuMs / proxyReport.wallMs, 2),
      },
    };
    log(
      `  ${count} process(es): ${figures.rps} deliveries/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ` +
        `2xx ${figures.ok2xx}, non-2xx ${figures.non2xx}; handler runs ${figures.handlerRunsPerProcess.join('+')} = ` +
        `${figures.handlerRuns} for ${figures.distinctEvents} distinct events (duplicates ${figures.duplicates}); ` +
        `redelivered ${again.length}: ${figures.redelivery.newHandlerRuns} new handler runs`,
    );
    return figures;
  } finally {
    await stop(...(proxy ? [proxy] : []), ...receivers);
  }
}

async function redisServerVersion(port) {
  const { Redis } = await import('ioredis');
  const node = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
  try {
    return /redis_version:(\S+)/.exec(await node.info('server'))?.[1];
  } finally {
    node.disconnect();
  }
}

const cleanup = async () => {
  for (const child of [...started].reverse()) await stop(child).catch(() => {});
  const removed = await deleteRunKeys(marker).catch((error) => {
    log(`  key clean-up failed: ${error.message}`);
    return 0;
  });
  removeScenarioLogs();
  removeWrkFiles();
  return removed;
};
process.once('SIGINT', () => {
  cleanup().finally(() => process.exit(130));
});

const startedAt = Date.now();
const loadAtStart = os.loadavg().map((v) => round(v, 2));
let results;
try {
  if (!(await clusterReady()))
    throw new Error('Redis Cluster on 127.0.0.1:7101-7103 is not ready: start it with bash .ci/redis-cluster.sh');
  const cpus = os.cpus();
  log(
    `Scale benchmark on ${cpus[0].model}, ${cpus.length} cores, Node ${process.version}; load tool ${loadTool}. ` +
      `Every process (receivers, workers, proxy, load generator, Redis) shares these ${cpus.length} cores.`,
  );
  log(`1a. Answer of a delivery: inline (memory store) vs queued (enqueue only), ${config.connections} connections`);
  const inlineMemory = await receiverLoad('inline, memory store', { role: 'receiver', store: 'memory' });
  const enqueue = {};
  for (const redis of ['redis', 'cluster']) {
    const mode = redis === 'redis' ? 'single' : 'cluster';
    const queueName = `q-enqueue-${redis}`;
    enqueue[redis] = await receiverLoad(
      `queued, ${redis === 'redis' ? 'single Redis' : 'Redis Cluster'}`,
      {
        role: 'receiver',
        store: 'redis',
        redis: mode,
        processing: 'queued',
        queueName,
        queuePrefix,
        storeKeyPrefix: `${marker}:idem:${queueName}:`,
      },
      { queue: { name: queueName, prefix: queuePrefix, cluster: mode === 'cluster' } },
    );
  }
  log(
    `1b. End to end: ${config.events} deliveries enqueued, handled by worker-only processes (concurrency ${config.workerConcurrency} each)`,
  );
  const workers = { redis: {}, cluster: {} };
  for (const redis of ['redis', 'cluster'])
    for (const count of [1, 2]) workers[redis][count] = await endToEnd(redis === 'redis' ? 'single' : 'cluster', count);
  log(
    `2. Instances: inline receivers on the Redis store behind a round-robin node:http proxy (${config.connections} connections)`,
  );
  const byCount = {};
  for (const count of [1, 2, 3]) byCount[count] = await instances(count);

  results = {
    date: new Date().toISOString(),
    machine: {
      cpu: cpus[0].model,
      cores: cpus.length,
      memoryGB: round(os.totalmem() / 2 ** 30, 1),
      platform: `${os.platform()} ${os.release()}`,
      loadAverageAtStart: loadAtStart,
      note:
        `${cpus.length} cores shared by every process of a run: receivers, workers, the round-robin proxy, ` +
        `the load generator (${loadTool}) and Redis. More processes than cores compete for CPU: the instances ` +
        'figures show how the module behaves with several instances (exactly once across them), not how it scales on more machines.',
    },
    versions: {
      node: process.version,
      nest: packageVersion('@nestjs/core', root),
      bullmq: packageVersion('bullmq', root),
      ioredis: packageVersion('ioredis', root),
      redis: await redisServerVersion(6379),
      redisCluster: await redisServerVersion(7101),
      loadTool: loadTool === 'wrk' ? `wrk ${wrkVersion()}` : `autocannon ${packageVersion('autocannon', root)}`,
    },
    config: { ...config, redeliveries: config.redeliveries, queuePrefix: '{scale-<runId>}' },
    queued: {
      redis: { enqueue: enqueue.redis, workers: workers.redis },
      cluster: { enqueue: enqueue.cluster, workers: workers.cluster },
      inlineMemory,
    },
    instances: byCount,
  };
} finally {
  const removed = await cleanup();
  log(`Removed ${removed} Redis keys of this run (${marker}).`);
}
mkdirSync(`${root}bench/results`, { recursive: true });
writeFileSync(`${root}bench/results/scale.json`, `${JSON.stringify(results, null, 2)}\n`);
log(`Wrote bench/results/scale.json (${Math.round((Date.now() - startedAt) / 1000)} s)`);
