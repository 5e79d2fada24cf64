#!/usr/bin/env node
/**
 * The benchmark harness (`npm run bench`, which compiles lib/ into dist-sample/ first).
 *
 *   npm run bench                 full run (~8 min): 5 interleaved rounds, writes bench/results/latest.json
 *                                 and bench/RESULTS.md
 *   npm run bench -- --quick      harness check for CI (~1 min): 1 round of 2 s per scenario, writes nothing;
 *                                 exits non-zero if a scenario of ours or a baseline cannot start, crashes,
 *                                 answers a non-2xx, or skips its handler; the peer being unavailable only warns
 *   options: --rounds N --duration S --warmup S --connections N --only id,id --no-memory --no-client
 *            --out FILE (write results there; a full run defaults to bench/results/latest.json)
 *            --before-lib DIR  also run ours-express, ours-fastify (and their default-logs, postgres, inbox and Cluster twins) on another compiled copy of lib/
 *            --lib DIR         run every scenario of ours on this compiled lib/ (DIR/index.js) instead of dist-sample/lib
 *                              (a build of a fixed commit, while lib/ changes under the run)
 *                              (DIR/index.js, inside this repository so that it resolves the same
 *                              node_modules), as `*-before`, for before/after ratios in one run
 *
 * Each HTTP scenario runs in its own child process (bench/scenarios/*.server.js, bench/peers/*.server.js);
 * autocannon runs here, on 127.0.0.1 only. Each round starts every scenario afresh, in a rotated order,
 * warms it up, then measures it; medians are taken across rounds and ratios between medians of the
 * same run.
 */
import { fork, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { DeliveryPool, signedDelivery, stripeSignedDelivery } from './lib/signed-payloads.js';
import { loadRun } from './lib/load-run.js';
import { startCpuAccount } from './lib/engine-cpu.js';
import { redisServerAvailable, startCluster, startRedis } from './lib/private-redis.js';
import {
  renderDurablePaths,
  renderGrowth,
  renderIssue31,
  renderKeys,
  renderScale,
} from './lib/results-report-issue22.js';
import { removeWrkFiles, wrkAvailable, wrkRun, wrkVersion } from './lib/wrk-run.js';
import { packageVersion } from './lib/package-version.js';
import { mergeReconcile } from './lib/reconcile-results.js';
import { mergeReceive } from './lib/receive-results.js';
import { mergeIssue40, renderIssue40 } from './lib/issue40-results.js';
import { mergeIssue42, renderIssue42 } from './lib/issue42-results.js';
import { instructionsSummary, renderResultsMarkdown, renderConsoleTable } from './lib/results-report.js';
import { ScenarioProcess, removeScenarioLogs } from './lib/scenario-process.js';
import { SCENARIOS } from './lib/scenarios.js';
import { median, ratio, round } from './lib/stats.js';

const benchDir = new URL('.', import.meta.url).pathname;
const rootDir = new URL('..', import.meta.url).pathname;
const peersDir = `${benchDir}peers`;

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    only: { type: 'string' },
    'no-memory': { type: 'boolean', default: false },
    'no-client': { type: 'boolean', default: false },
    out: { type: 'string' },
    'before-lib': { type: 'string' },
    lib: { type: 'string' },
    load: { type: 'string' },
    render: { type: 'boolean', default: false },
  },
});

// --render: no load; refresh latest.json's callgrind figures (instructions.json, growth.json,
// memory-growth.json) and write RESULTS.md again from it, e.g. after `npm run bench:instructions`.
if (args.render) {
  const latestFile = `${benchDir}results/latest.json`;
  const latest = JSON.parse(readFileSync(latestFile, 'utf8'));
  const instructions = readInstructions();
  if (instructions) latest.instructions = instructionsSummary(instructions, readClientInstructions());
  const growth = readGrowth();
  if (growth) latest.growth = growth;
  mergeEngines(latest);
  mergeReconcile(latest, benchDir);
  mergeReceive(latest, benchDir);
  writeFileSync(latestFile, `${JSON.stringify(latest, null, 2)}\n`);
  writeFileSync(`${benchDir}RESULTS.md`, renderAll(latest, instructions));
  console.log(`Wrote ${latestFile} and ${benchDir}RESULTS.md from the run of ${latest.date}`);
  process.exit(0);
}

/** Every section of RESULTS.md, from one run's results (and the callgrind counts). */
function renderAll(results, instructions) {
  return [
    renderResultsMarkdown(results, instructions),
    renderDurablePaths(results),
    renderScale(results.scale),
    renderGrowth(results.growth),
    renderIssue31(results),
    renderIssue40(results),
    renderIssue42(results),
    renderKeys(results),
  ].join('\n');
}

/** The counts of the last `npm run bench:instructions` (bench/results/instructions.json), if any. */
function readInstructions() {
  const file = `${benchDir}results/instructions.json`;
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/**
 * The durable paths beside their hand-written anchors, per delivery (bench/engines.bench.js,
 * results/engines.json): kept as `engines`, and its ratios fill `ratios.inboxVsHandWritten` and
 * `ratios.clusterVsHandWritten` where the HTTP run did not measure them (its own scenarios win).
 */
function mergeEngines(results, { issue40 = true } = {}) {
  // The HTTP anchors run of issue 31 (`--only ... --out results/anchors-31.json`): its same-run ratios win.
  const anchorsFile = `${benchDir}results/anchors-31.json`;
  if (existsSync(anchorsFile) && results.config?.mode !== 'quick') {
    const anchors = JSON.parse(readFileSync(anchorsFile, 'utf8'));
    results.anchors31 = {
      date: anchors.date,
      machine: anchors.machine,
      config: anchors.config,
      scenarios: Object.fromEntries(
        Object.entries(anchors.scenarios).map(([id, sc]) => [
          id,
          {
            rps: sc.rps,
            p99Ms: sc.p99Ms,
            serverCpuUsPerRequest: sc.serverCpuUsPerRequest,
            engineCpuUsPerRequest: sc.engineCpuUsPerRequest,
            machineBusyCores: sc.machineBusyCores,
            ...(sc.sqlPerDelivery !== undefined ? { sqlPerDelivery: sc.sqlPerDelivery } : {}),
            rpsPerRound: (sc.perRound ?? []).map((r) => r.rps),
          },
        ]),
      ),
      ratios: anchors.ratios,
      cpuPerRequest: anchors.cpuPerRequest,
      perDelivery: anchors.perDelivery,
    };
    results.ratios ??= {};
    for (const key of ['inboxVsHandWritten', 'clusterVsHandWritten'])
      if (anchors.ratios?.[key] != null && results.scenarios?.['hand-inbox-express'] === undefined)
        results.ratios[key] = anchors.ratios[key];
  }
  const file = `${benchDir}results/engines.json`;
  if (!existsSync(file)) return;
  const engines = JSON.parse(readFileSync(file, 'utf8'));
  results.engines = engines;
  results.ratios ??= {};
  for (const key of ['inboxVsHandWritten', 'clusterVsHandWritten']) results.ratios[key] ??= engines.ratios[key] ?? null;
  // Issue 40: `commandsPerDelivery.redis`, `statementsPerDelivery.postgres` (from engines.json) and the
  // issue's figures beside their anchors (bench/lib/issue40-results.js).
  // (Not into the output of a partial run: the issue's HTTP figures are such an output.)
  if (issue40 && results.config?.mode !== 'quick') mergeIssue40(results, benchDir);
  // Issue 42: `currentState` and the issue's figures beside their anchors (bench/lib/issue42-results.js).
  if (issue40 && results.config?.mode !== 'quick') mergeIssue42(results, benchDir);
}

/** The client's counts per call of the last `node bench/callgrind.js --client`, if any. */
function readClientInstructions() {
  const file = `${benchDir}results/client-instructions.json`;
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** How cost grows: the figures of the last `node bench/callgrind.js --growth` and memory.bench.js --growth. */
function readGrowth() {
  const file = `${benchDir}results/growth.json`;
  if (!existsSync(file)) return undefined;
  const counted = JSON.parse(readFileSync(file, 'utf8'));
  const memoryFile = `${benchDir}results/memory-growth.json`;
  return {
    countedAt: counted.date,
    instructionsPerDelivery: Object.fromEntries(
      Object.entries(counted.cases).map(([id, c]) => [id, c.instructionsPerDelivery]),
    ),
    ...(existsSync(memoryFile) ? { memory: JSON.parse(readFileSync(memoryFile, 'utf8')) } : {}),
  };
}

const quick = args.quick;
const config = {
  mode: quick ? 'quick' : 'full',
  rounds: Number(args.rounds ?? (quick ? 1 : 5)),
  durationS: Number(args.duration ?? (quick ? 2 : 6)),
  warmupS: Number(args.warmup ?? (quick ? 1 : 2)),
  connections: Number(args.connections ?? 16),
  pipelining: 1,
};
const outFile = args.out ?? (quick ? undefined : `${benchDir}results/latest.json`);
const only = args.only ? new Set(args.only.split(',')) : undefined;

const failures = [];
const warnings = [];
const log = (line) => console.log(line);

// ---- preconditions -------------------------------------------------------------------------------

/** The compiled lib of ours (`--lib`, else dist-sample/lib), as a URL of its index.js. */
const libIndexUrl = (dir) => new URL(`${dir.replace(/\/$/, '')}/index.js`, `file://${process.cwd()}/`).href;
const oursLib = args.lib ? libIndexUrl(args.lib) : undefined;
if (!existsSync(new URL(oursLib ?? `file://${rootDir}dist-sample/lib/index.js`).pathname)) {
  console.error(
    `${args.lib ?? 'dist-sample/lib'}/index.js is missing: run \`npm run bench\` (it compiles lib/ first).`,
  );
  process.exit(1);
}

/** Installs bench/peers (its own package-lock) when a clean clone has no node_modules there. */
function ensurePeers() {
  if (existsSync(`${peersDir}/node_modules/@golevelup/nestjs-stripe/package.json`)) return { available: true };
  log('bench/peers: installing the peer module (npm ci, isolated from the root package)...');
  const started = Date.now();
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: peersDir,
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (result.status !== 0 || !existsSync(`${peersDir}/node_modules/@golevelup/nestjs-stripe/package.json`)) {
    const why = result.error
      ? result.error.message
      : (result.stderr || result.stdout || `exit ${result.status}`).trim().split('\n').slice(-3).join(' | ');
    return { available: false, reason: `npm ci in bench/peers failed: ${why}` };
  }
  log(`bench/peers: installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { available: true };
}

/** True when Redis answers PING on 127.0.0.1:6379 within a second. */
function redisAnswers() {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 6379 });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

/** The scenarios that `--before-lib` also runs on the other compiled lib/, as `<id>-before`. */
const BEFORE_IDS = new Set([
  'ours-express',
  'ours-fastify',
  'ours-express-default-logs',
  'ours-fastify-default-logs',
  'ours-express-postgres',
  'ours-express-inbox',
  'ours-express-redis-cluster',
]);
// `--lib`: every scenario of ours (bench/lib/ours-app.js takes `lib`) on that build.
const SCENARIOS_OF_RUN = oursLib
  ? SCENARIOS.map((s) => (s.file.endsWith('/ours.server.js') ? { ...s, options: { ...s.options, lib: oursLib } } : s))
  : SCENARIOS;
const beforeScenarios = args['before-lib']
  ? SCENARIOS_OF_RUN.filter((s) => BEFORE_IDS.has(s.id)).map((s) => ({
      ...s,
      id: `${s.id}-before`,
      title: `${s.title} (before: ${args['before-lib']})`,
      options: {
        ...s.options,
        lib: libIndexUrl(args['before-lib']),
      },
    }))
  : [];
const selected = [...SCENARIOS_OF_RUN, ...beforeScenarios].filter((s) =>
  only ? only.has(s.id) || (s.id.endsWith('-before') && only.has(s.id.slice(0, -7))) : !(quick && s.fullOnly),
);
const unavailable = new Map();
const wantsPeer = selected.some((s) => s.group === 'peer');
const peers = wantsPeer ? ensurePeers() : { available: true };
if (!peers.available) {
  warnings.push(`peer scenarios not run: ${peers.reason}`);
  for (const s of selected) if (s.group === 'peer') unavailable.set(s.id, peers.reason);
}
if (selected.some((s) => s.needsRedis) && !(await redisAnswers())) {
  const reason = 'Redis does not answer on 127.0.0.1:6379';
  warnings.push(`Redis scenarios not run: ${reason}`);
  for (const s of selected) if (s.needsRedis) unavailable.set(s.id, reason);
}
// The bench's own engines (issue 31): private redis-server instances and Cluster, started here and
// stopped at the end, so that a scenario's engine CPU is theirs alone (PostgreSQL: the backends of the
// scenario's own connections, reported by the scenario).
const ENGINE_PORTS = { redis: 6391, 'redis-aof': 6392, cluster: [7211, 7212, 7213] };
const engines = {};
for (const kind of new Set(selected.map((s) => s.engine).filter((e) => e && e !== 'postgres'))) {
  try {
    if (!redisServerAvailable()) throw new Error('redis-server is not installed');
    engines[kind] =
      kind === 'cluster'
        ? await startCluster({ ports: ENGINE_PORTS.cluster })
        : await startRedis({ port: ENGINE_PORTS[kind], persistence: kind === 'redis-aof' ? 'aof' : 'none' });
    if (kind === 'cluster') process.env.REDIS_CLUSTER_NODES = engines.cluster.nodes;
    log(`Started the bench's own ${kind} (pids ${engines[kind].pids.join(', ')})`);
  } catch (error) {
    const reason = `could not start the bench's own ${kind}: ${error.message}`;
    warnings.push(`${kind} scenarios not run: ${reason}`);
    for (const s of selected) if (s.engine === kind) unavailable.set(s.id, reason);
  }
}
const runnable = selected.filter((s) => !unavailable.has(s.id));

// ---- signed deliveries ---------------------------------------------------------------------------

// Enough distinct pre-signed deliveries for a whole scenario (warm-up + measured) at 40k req/s, well
// above the fastest route seen here (a bare Fastify route ~25k req/s on 2 cores, quiet machine): wrk
// cannot sign on the fly, and a used-up pool makes it send ids again (answered as duplicates, so the
// handler rightly does not run: counted apart below). Autocannon signs on the fly past the end. Each
// run starts a new process (new memory store, new Redis key prefix, new queue), which has seen none.
const poolSize = Math.max(60_000, 40_000 * (config.warmupS + config.durationS));
const poolStarted = performance.now();
const pools = {};
if (runnable.some((s) => s.payload === 'ours')) pools.ours = new DeliveryPool(() => signedDelivery(), poolSize);
let stripePoolSignedAt = 0;
/** Stripe deliveries carry a timestamp checked within 300 s: re-sign the pool when it gets old. */
function stripePool() {
  if (!pools.stripe || Date.now() - stripePoolSignedAt > 200_000) {
    const timestamp = Math.floor(Date.now() / 1000);
    pools.stripe = new DeliveryPool(() => stripeSignedDelivery(timestamp), quick ? 30_000 : 100_000);
    stripePoolSignedAt = Date.now();
  }
  return pools.stripe;
}
log(`Signed ${poolSize} deliveries in ${((performance.now() - poolStarted) / 1000).toFixed(1)} s`);

// ---- HTTP scenarios ------------------------------------------------------------------------------

/** The load generator: wrk when installed (default; `--load autocannon` to choose), else autocannon. */
const loadGenerator = args.load ?? (wrkAvailable() ? 'wrk' : 'autocannon');
if (!['wrk', 'autocannon'].includes(loadGenerator))
  throw new Error(`--load must be wrk or autocannon, not ${args.load}`);
if (loadGenerator === 'wrk' && !wrkAvailable())
  throw new Error('--load wrk: wrk is not installed (apt-get install wrk)');

/** One load run with the chosen generator (autocannon when wrk cannot send this pool's deliveries). */
async function runLoad(options) {
  if (loadGenerator === 'wrk') {
    const result = await wrkRun(options);
    if (result) return result;
  }
  return loadRun(options);
}

async function runScenario(scenario) {
  const pool = scenario.payload === 'stripe' ? stripePool() : pools.ours;
  pool.rewind();
  let child;
  try {
    const redisPort = engines[scenario.engine]?.port;
    child = await ScenarioProcess.start({
      file: scenario.file,
      options: redisPort === undefined ? scenario.options : { ...scenario.options, redisPort },
      cwd: rootDir,
    });
  } catch (error) {
    return { error: `did not start: ${error.message}` };
  }
  try {
    const load = { port: child.port, path: scenario.path, pool, connections: config.connections };
    const warm = await runLoad({ ...load, durationS: config.warmupS });
    await child.mark();
    const clientCpu = process.cpuUsage();
    const cpuAccount = startCpuAccount();
    const loadStarted = performance.now();
    const measured = await runLoad({ ...load, durationS: config.durationS });
    const cpu = cpuAccount.stop(performance.now() - loadStarted);
    const clientCpuMs =
      measured.clientCpuMs ??
      (() => {
        const c = process.cpuUsage(clientCpu);
        return (c.user + c.system) / 1000;
      })();
    const server = await child.report();
    // Engine CPU of the bench's own engine processes only: its Redis instances, or its PostgreSQL backends.
    const own = cpu.own(engines[scenario.engine]?.pids ?? server.extra?.enginePids ?? []);
    const ok2xx = measured.requests - measured.non2xx;
    return {
      nestVersion: child.nestVersion,
      rps: measured.rps,
      p50: measured.p50,
      p99: measured.p99,
      requests: measured.requests,
      non2xx: measured.non2xx + warm.non2xx,
      errors: measured.errors + warm.errors,
      timeouts: measured.timeouts + warm.timeouts,
      statusCodes: measured.statusCodes,
      handlerRuns: server.handlerRuns,
      // A repeated id (a used-up wrk pool) is a duplicate: its handler must not run again.
      handlerMissing: scenario.runsHandler ? Math.max(0, ok2xx - (measured.repeated ?? 0) - server.handlerRuns) : 0,
      // Queued: every 2xx (warm-up included) promises a job durably in the queue.
      jobsMissing:
        server.extra?.jobsQueued !== undefined
          ? Math.max(0, ok2xx + warm.requests - warm.non2xx - server.extra.jobsQueued)
          : 0,
      serverCores: server.cpuMs / server.wallMs,
      serverCpuUsPerRequest: measured.requests > 0 ? (server.cpuMs * 1000) / measured.requests : undefined,
      clientCores: clientCpuMs / (measured.durationS * 1000),
      // Where the rest of the machine went: PostgreSQL backends and redis-server, and every core's busy time.
      engineCores: own.engineCores,
      engineCpuUsPerRequest:
        measured.requests > 0 && own.engineCpuMs !== undefined
          ? (own.engineCpuMs * 1000) / measured.requests
          : undefined,
      allEnginesCpuUsPerRequest:
        measured.requests > 0 && cpu.allEnginesCpuMs !== undefined
          ? (cpu.allEnginesCpuMs * 1000) / measured.requests
          : undefined,
      machineBusyCores: cpu.machineBusyCores,
      serverHeapMB: server.heapUsedMB,
      signedOnTheFly: pool.signedOnTheFly,
      repeatedIds: pool.repeated,
      sqlPerDelivery: server.extra?.sqlPerDelivery,
    };
  } catch (error) {
    return { error: error.message };
  } finally {
    const exit = await child.close();
    if (exit?.code !== 0)
      warnings.push(`${scenario.id}: the scenario process did not exit cleanly (${JSON.stringify(exit)})`);
  }
}

const runs = Object.fromEntries(runnable.map((s) => [s.id, []]));
const startedAt = new Date();
log(
  `Running ${runnable.length} scenarios x ${config.rounds} round(s): ${config.warmupS} s warm-up + ${config.durationS} s measured, ` +
    `${config.connections} connections, on 127.0.0.1`,
);
for (let r = 0; r < config.rounds; r++) {
  const order = runnable.map((_, i) => runnable[(i + r) % runnable.length]);
  for (const scenario of order) {
    const result = await runScenario(scenario);
    runs[scenario.id].push(result);
    if (result.error) {
      log(`  round ${r + 1}  ${scenario.id.padEnd(24)} FAILED: ${result.error.split('\n')[0]}`);
    } else {
      log(
        `  round ${r + 1}  ${scenario.id.padEnd(24)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(2)} ms  ` +
          `p99 ${result.p99.toFixed(2)} ms  non-2xx ${result.non2xx}  server ${result.serverCores.toFixed(2)} cores, ${result.serverCpuUsPerRequest?.toFixed(0)} µs CPU/req` +
          (result.sqlPerDelivery != null ? `  ${result.sqlPerDelivery} SQL/delivery` : '') +
          (result.engineCores > 0.05
            ? `  engines ${result.engineCores.toFixed(2)} cores, ${result.engineCpuUsPerRequest?.toFixed(0)} µs/req`
            : '') +
          (result.machineBusyCores !== undefined ? `  machine ${result.machineBusyCores.toFixed(2)} cores busy` : ''),
      );
    }
  }
}

// Keep the children's output only when a run failed (its error message names the file).
if (
  Object.values(runs)
    .flat()
    .every((r) => !r.error)
)
  removeScenarioLogs();
// The request files of wrk (a few hundred MB) go in every case.
removeWrkFiles();
for (const engine of Object.values(engines)) await engine.stop();

// ---- memory and client ---------------------------------------------------------------------------

/** Runs a benchmark script in a child and returns the message of `type` it sends. */
function runChild(file, execArgv, type) {
  return new Promise((resolve, reject) => {
    const child = fork(`${benchDir}${file}`, quick ? ['--quick'] : [], {
      execArgv,
      cwd: rootDir,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let output = '';
    let result;
    child.stdout.on('data', (c) => (output = (output + c).slice(-4000)));
    child.stderr.on('data', (c) => (output = (output + c).slice(-4000)));
    child.on('message', (m) => {
      if (m?.type === type) result = m.result;
    });
    child.on('exit', (code) =>
      result && code === 0
        ? resolve(result)
        : reject(new Error(`${file} exited ${code}: ${output.trim().split('\n').slice(-8).join(' | ')}`)),
    );
  });
}

let memory;
if (!args['no-memory'] && !only) {
  log('Memory: MemoryIdempotencyStore retained size, and heap at steady state...');
  try {
    memory = await runChild('memory.bench.js', ['--expose-gc'], 'memory-result');
    log(
      `  ${memory.retained.events} completed events retained: ${memory.retained.heapMB} MB heap (+${memory.retained.arrayBuffersMB} MB typed arrays); ` +
        `${memory.steadyState.deliveries} deliveries, maxEntries ${memory.steadyState.maxEntries}: store ${memory.steadyState.storeSize}, ` +
        `heap ${memory.steadyState.heapMB} MB, growth over the second half ${memory.steadyState.growthSecondHalfMB} MB`,
    );
  } catch (error) {
    failures.push(`memory benchmark: ${error.message}`);
  }
}

let client;
if (!args['no-client'] && !only) {
  log('Client: PaymentsService.paymentIntents.retrieve vs raw keep-alive axios...');
  try {
    client = await runChild('client.bench.js', [], 'client-result');
    for (const mode of ['sequential', 'concurrent']) {
      const c = client[mode];
      log(
        `  ${mode.padEnd(10)} ${c.calls} calls @${c.concurrency}: ours ${c.oursWallMs} ms, axios ${c.axiosWallMs} ms (x${c.oursVsAxios}); ` +
          `sockets ours ${c.oursSockets}, axios ${c.axiosSockets}`,
      );
    }
  } catch (error) {
    failures.push(`client benchmark: ${error.message}`);
  }
}

// ---- summary -------------------------------------------------------------------------------------

const scenarios = {};
for (const s of selected) {
  if (unavailable.has(s.id)) {
    scenarios[s.id] = { title: s.title, unavailable: unavailable.get(s.id) };
    continue;
  }
  const ok = runs[s.id].filter((r) => !r.error);
  const errors = runs[s.id].filter((r) => r.error).map((r) => r.error);
  scenarios[s.id] = {
    title: s.title,
    rounds: ok.length,
    nestVersion: ok[0]?.nestVersion,
    rps: round(median(ok.map((r) => r.rps)), 0),
    p50Ms: round(median(ok.map((r) => r.p50)), 3),
    p99Ms: round(median(ok.map((r) => r.p99)), 3),
    non2xx: ok.reduce((n, r) => n + r.non2xx, 0),
    socketErrors: ok.reduce((n, r) => n + r.errors, 0),
    requests: ok.reduce((n, r) => n + r.requests, 0),
    handlerMissing: ok.reduce((n, r) => n + r.handlerMissing, 0),
    jobsMissing: ok.reduce((n, r) => n + r.jobsMissing, 0),
    // PostgreSQL scenarios: SQL statements sent per delivery (median over rounds; bench/lib/postgres-bench.js).
    ...(ok.some((r) => r.sqlPerDelivery != null) ? { sqlPerDelivery: median(ok.map((r) => r.sqlPerDelivery)) } : {}),
    serverCores: round(median(ok.map((r) => r.serverCores)), 2),
    serverCpuUsPerRequest: round(median(ok.map((r) => r.serverCpuUsPerRequest)), 1),
    clientCores: round(median(ok.map((r) => r.clientCores)), 2),
    engineCores: round(median(ok.map((r) => r.engineCores ?? 0)), 2),
    engineCpuUsPerRequest: round(median(ok.map((r) => r.engineCpuUsPerRequest ?? 0)), 1),
    allEnginesCpuUsPerRequest: round(median(ok.map((r) => r.allEnginesCpuUsPerRequest ?? 0)), 1),
    machineBusyCores: round(median(ok.map((r) => r.machineBusyCores ?? 0)), 2),
    signedOnTheFly: ok.reduce((n, r) => n + r.signedOnTheFly, 0),
    perRound: runs[s.id].map((r) =>
      r.error
        ? { error: r.error }
        : {
            rps: round(r.rps, 0),
            p50Ms: round(r.p50, 3),
            p99Ms: round(r.p99, 3),
            non2xx: r.non2xx,
            serverCores: round(r.serverCores, 2),
            serverCpuUsPerRequest: round(r.serverCpuUsPerRequest, 1),
            engineCores: round(r.engineCores ?? 0, 2),
            engineCpuUsPerRequest: round(r.engineCpuUsPerRequest ?? 0, 1),
            ...(r.sqlPerDelivery != null ? { sqlPerDelivery: r.sqlPerDelivery } : {}),
            machineBusyCores: round(r.machineBusyCores ?? 0, 2),
          },
    ),
    ...(errors.length ? { errors } : {}),
  };
  const blame = (what) => (s.group === 'peer' ? warnings : failures).push(`${s.id}: ${what}`);
  if (errors.length) blame(`${errors.length} round(s) failed: ${errors[0]}`);
  if (scenarios[s.id].non2xx > 0)
    blame(`${scenarios[s.id].non2xx} non-2xx answers (${JSON.stringify(ok.map((r) => r.statusCodes))})`);
  if (scenarios[s.id].socketErrors > 0) blame(`${scenarios[s.id].socketErrors} socket errors/timeouts`);
  if (scenarios[s.id].handlerMissing > 0)
    blame(`the handler did not run for ${scenarios[s.id].handlerMissing} answered deliveries`);
  if (scenarios[s.id].jobsMissing > 0)
    blame(`${scenarios[s.id].jobsMissing} acknowledged deliveries have no job in the queue`);
}

const rps = (id) => scenarios[id]?.rps;
const ratios = {
  expressVsBaseline: ratio(rps('ours-express'), rps('baseline-express')),
  p99VsBaseline: ratio(scenarios['ours-express']?.p99Ms, scenarios['baseline-express']?.p99Ms),
  fastifyVsBaseline: ratio(rps('ours-fastify'), rps('baseline-fastify')),
  expressDefaultLogsVsBaseline: ratio(rps('ours-express-default-logs'), rps('baseline-express')),
  fastifyDefaultLogsVsBaseline: ratio(rps('ours-fastify-default-logs'), rps('baseline-fastify')),
  redisVsMemory: ratio(rps('ours-express-redis'), rps('ours-express')),
  redisClusterVsMemory: ratio(rps('ours-express-redis-cluster'), rps('ours-express')),
  queuedVsMemory: ratio(rps('ours-express-queued'), rps('ours-express')),
  postgresVsMemory: ratio(rps('ours-express-postgres'), rps('ours-express')),
  inboxVsMemory: ratio(rps('ours-express-inbox'), rps('ours-express')),
  clientVsAxios: client?.clientVsAxios ?? null,
  peerVsItsBaseline: ratio(rps('peer-golevelup-stripe'), rps('peer-baseline')),
  fastifyVsPeer: ratio(rps('ours-fastify'), rps('peer-golevelup-stripe')),
  expressVsPeer: ratio(rps('ours-express'), rps('peer-golevelup-stripe')),
  baselineFastifyVsExpress: ratio(rps('baseline-fastify'), rps('baseline-express')),
  // The physical limits (issue 22): ours over a plain route doing the same work, no Nest.
  fastifyVsPlainFastify: ratio(rps('ours-fastify'), rps('plain-fastify')),
  expressVsPlainNode: ratio(rps('ours-express'), rps('plain-node')),
  // Issue 31: the strongest anchors, measured in the same run.
  expressVsResBaseline: ratio(rps('ours-express'), rps('res-baseline-express')),
  fastifyVsResBaseline: ratio(rps('ours-fastify'), rps('res-baseline-fastify')),
  inboxVsHandWritten: ratio(rps('ours-express-inbox'), rps('hand-inbox-express')),
  clusterVsHandWritten: ratio(rps('ours-express-redis-cluster'), rps('hand-claim-redis-cluster')),
  redisAofVsRedis: ratio(rps('ours-express-redis-aof'), rps('ours-express-redis')),
};
if (beforeScenarios.length) {
  Object.assign(ratios, {
    beforeExpressVsBaseline: ratio(rps('ours-express-before'), rps('baseline-express')),
    beforeP99VsBaseline: ratio(scenarios['ours-express-before']?.p99Ms, scenarios['baseline-express']?.p99Ms),
    beforeFastifyVsBaseline: ratio(rps('ours-fastify-before'), rps('baseline-fastify')),
    beforeExpressDefaultLogsVsBaseline: ratio(rps('ours-express-default-logs-before'), rps('baseline-express')),
    beforeFastifyDefaultLogsVsBaseline: ratio(rps('ours-fastify-default-logs-before'), rps('baseline-fastify')),
    beforeClusterVsHandWritten: ratio(rps('ours-express-redis-cluster-before'), rps('hand-claim-redis-cluster')),
  });
}
// Server CPU time per request, ours over the baseline: a second view of the overhead that depends
// less on how busy the machine is than req/s does (a ratio > 1 means we spend more per request).
const cpu = (id) => scenarios[id]?.serverCpuUsPerRequest;
const cpuPerRequest = {
  expressVsBaseline: ratio(cpu('ours-express'), cpu('baseline-express')),
  fastifyVsBaseline: ratio(cpu('ours-fastify'), cpu('baseline-fastify')),
  expressDefaultLogsVsBaseline: ratio(cpu('ours-express-default-logs'), cpu('baseline-express')),
  fastifyDefaultLogsVsBaseline: ratio(cpu('ours-fastify-default-logs'), cpu('baseline-fastify')),
  redisVsMemory: ratio(cpu('ours-express-redis'), cpu('ours-express')),
  redisClusterVsMemory: ratio(cpu('ours-express-redis-cluster'), cpu('ours-express')),
  postgresVsMemory: ratio(cpu('ours-express-postgres'), cpu('ours-express')),
  inboxVsMemory: ratio(cpu('ours-express-inbox'), cpu('ours-express')),
  fastifyVsPlainFastify: ratio(cpu('ours-fastify'), cpu('plain-fastify')),
  expressVsPlainNode: ratio(cpu('ours-express'), cpu('plain-node')),
  peerVsItsBaseline: ratio(cpu('peer-golevelup-stripe'), cpu('peer-baseline')),
  expressVsResBaseline: ratio(cpu('ours-express'), cpu('res-baseline-express')),
  fastifyVsResBaseline: ratio(cpu('ours-fastify'), cpu('res-baseline-fastify')),
  inboxVsHandWritten: ratio(cpu('ours-express-inbox'), cpu('hand-inbox-express')),
  clusterVsHandWritten: ratio(cpu('ours-express-redis-cluster'), cpu('hand-claim-redis-cluster')),
};
// PostgreSQL work per delivery, ours over the hand-written inbox (issue 31): statements (exchanges) and
// the CPU of the bench's own PostgreSQL backends.
const engineCpu = (id) => scenarios[id]?.engineCpuUsPerRequest;
const perDelivery = {
  inboxVsHandWrittenStatements: ratio(
    scenarios['ours-express-inbox']?.sqlPerDelivery,
    scenarios['hand-inbox-express']?.sqlPerDelivery,
  ),
  inboxVsHandWrittenPostgresCpu: ratio(engineCpu('ours-express-inbox'), engineCpu('hand-inbox-express')),
  clusterVsHandWrittenEngineCpu: ratio(engineCpu('ours-express-redis-cluster'), engineCpu('hand-claim-redis-cluster')),
  redisAofVsRedisEngineCpu: ratio(engineCpu('ours-express-redis-aof'), engineCpu('ours-express-redis')),
};
if (beforeScenarios.length) {
  Object.assign(cpuPerRequest, {
    beforeExpressVsBaseline: ratio(cpu('ours-express-before'), cpu('baseline-express')),
    beforeFastifyVsBaseline: ratio(cpu('ours-fastify-before'), cpu('baseline-fastify')),
    beforeExpressDefaultLogsVsBaseline: ratio(cpu('ours-express-default-logs-before'), cpu('baseline-express')),
    beforeFastifyDefaultLogsVsBaseline: ratio(cpu('ours-fastify-default-logs-before'), cpu('baseline-fastify')),
    beforeClusterVsHandWritten: ratio(cpu('ours-express-redis-cluster-before'), cpu('hand-claim-redis-cluster')),
  });
}

// The same ratios taken round by round (each round runs every scenario once, in a rotated order), then
// their median (issue 40): a shared machine's drift between rounds moves these less than the ratios of
// medians above. req/s ours over the reference; server CPU per request ours over the reference.
const PAIRS = {
  expressVsBaseline: ['ours-express', 'baseline-express'],
  fastifyVsBaseline: ['ours-fastify', 'baseline-fastify'],
  redisVsMemory: ['ours-express-redis', 'ours-express'],
  redisClusterVsMemory: ['ours-express-redis-cluster', 'ours-express'],
  postgresVsMemory: ['ours-express-postgres', 'ours-express'],
  inboxVsMemory: ['ours-express-inbox', 'ours-express'],
  inboxVsHandWritten: ['ours-express-inbox', 'hand-inbox-express'],
  clusterVsHandWritten: ['ours-express-redis-cluster', 'hand-claim-redis-cluster'],
  redisAofVsRedis: ['ours-express-redis-aof', 'ours-express-redis'],
};
const pairedOf = (a, b, field) => {
  if (!runs[a] || !runs[b]) return null;
  const each = runs[a].map((x, i) => (x.error || runs[b][i].error ? undefined : x[field] / runs[b][i][field]));
  const m = median(each.filter((v) => v !== undefined));
  return m === undefined ? null : round(m, 3);
};
const pairedRatios = {
  rps: Object.fromEntries(Object.entries(PAIRS).map(([k, [a, b]]) => [k, pairedOf(a, b, 'rps')])),
  serverCpuPerRequest: Object.fromEntries(
    Object.entries(PAIRS).map(([k, [a, b]]) => [k, pairedOf(a, b, 'serverCpuUsPerRequest')]),
  ),
};

// A full run also measures the queued mode with workers and the instances behind a proxy
// (bench/scale.bench.js, ~2.5 min; writes bench/results/scale.json).
let scale;
if (!quick && !only) {
  log('');
  log('Scale: queued mode with 1 and 2 workers, 1-3 instances behind a proxy (bench/scale.bench.js)');
  const scaleRun = spawnSync(process.execPath, [`${benchDir}scale.bench.js`], { cwd: rootDir, stdio: 'inherit' });
  if (scaleRun.status === 0) scale = JSON.parse(readFileSync(`${benchDir}results/scale.json`, 'utf8'));
  else failures.push(`bench/scale.bench.js exited with ${scaleRun.status ?? scaleRun.signal}`);
}
const growth = readGrowth();

const cpuList = cpus();
const results = {
  date: startedAt.toISOString(),
  durationS: round((Date.now() - startedAt.getTime()) / 1000, 0),
  machine: {
    cpu: cpuList[0]?.model ?? 'unknown',
    cores: cpuList.length,
    memoryGB: round(totalmem() / 2 ** 30, 1),
    loadAverageAtStart: loadavg().map((l) => round(l, 2)),
  },
  versions: {
    node: process.version,
    nest: packageVersion('@nestjs/core', rootDir),
    nestjsPayments: JSON.parse(readFileSync(`${rootDir}package.json`, 'utf8')).version,
    peerNest: packageVersion('@nestjs/core', peersDir),
    peerModule: packageVersion('@golevelup/nestjs-stripe', peersDir),
    stripe: packageVersion('stripe', peersDir),
    autocannon: packageVersion('autocannon', rootDir),
    wrk: loadGenerator === 'wrk' ? wrkVersion() : undefined,
  },
  config: {
    ...config,
    loadGenerator,
    payloadBytes: 1024,
    logLevels:
      "log, warn, error, fatal (Nest default minus debug/verbose); the *-default-logs scenarios: Nest's default logger (every level)",
    ...(args['before-lib'] ? { beforeLib: args['before-lib'] } : {}),
  },
  scenarios,
  ratios,
  cpuPerRequest,
  pairedRatios,
  perDelivery,
  memory: memory
    ? {
        retained100kMB: memory.retained.heapMB,
        retainedTypedArraysMB: memory.retained.arrayBuffersMB,
        retainedEvents: memory.retained.events,
        bytesPerEvent: memory.retained.bytesPerEvent,
        ...(memory.perDelivery ? { bytesPerHandledDelivery: memory.perDelivery.bytesPerDelivery } : {}),
        steadyState: memory.steadyState,
      }
    : null,
  client: client ?? null,
  ...(growth ? { growth } : {}),
  ...(scale ? { scale } : {}),
  warnings,
  failures,
};

log('');
log(renderConsoleTable(results));
for (const w of warnings) log(`WARNING: ${w}`);
for (const f of failures) log(`FAILURE: ${f}`);

if (outFile) {
  mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true });
  // The instruction figures of the last `npm run bench:instructions` travel with the timings.
  const instructions = readInstructions();
  if (instructions) results.instructions = instructionsSummary(instructions, readClientInstructions());
  mergeEngines(results, { issue40: !only });
  if (results.config.mode !== 'quick') mergeReconcile(results, benchDir);
  if (results.config.mode !== 'quick') mergeReceive(results, benchDir);
  writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
  log(`Wrote ${outFile}`);
  if (!quick && !only) {
    writeFileSync(`${benchDir}RESULTS.md`, renderAll(results, instructions));
    log(`Wrote ${benchDir}RESULTS.md`);
  }
}
log(`Done in ${results.durationS} s (${config.mode} run).`);
process.exit(failures.length > 0 ? 1 : 0);
