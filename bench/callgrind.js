#!/usr/bin/env node
/**
 * Noise-free check of the delivery path: counts the CPU instructions one delivery costs, with
 * `valgrind --tool=callgrind`, for ours and for the bare baseline route, on Express and on Fastify.
 * Each case is a separate process (lib/instructions-driver.js) that builds the app, sends it `--warmup`
 * then `--deliveries` signed deliveries in process (light-my-request: no socket, no load generator);
 * callgrind counts only the measured deliveries (see the driver). Instruction counts do not depend on
 * how busy the machine is, so a regression of a few per cent shows even on a shared 2-core machine,
 * where req/s moves by 10 %. Slow (valgrind runs Node ~50x slower): not part of CI.
 *
 *   npm run bench:instructions          compiles lib/ into dist-sample/ first, then runs every case
 *   node bench/callgrind.js [--deliveries 2000] [--warmup 10000] [--only id,id] [--jobs 2]
 *                           [--lib DIR]         count ours on this compiled lib/ (DIR/index.js) instead of dist-sample/lib
 *                           [--before-lib DIR]  also count ours on another compiled lib/ (DIR/index.js), as `*-before`
 *                           [--node-flags=FLAGS]  flags of the counted Node process, default PREDICTABLE_FLAGS below
 *                                               (V8's background threads and time-driven GC heuristics make counts vary with load)
 *                           [--client]          the API client's cases only (per call, ours vs raw axios), into results/client-instructions.json
 *                           [--merge]           keep the cases of FILE that this run does not count (count in parts)
 *                           [--out FILE]        default bench/results/instructions.json (RESULTS.md shows it)
 *                           [--growth]          the growth cases only (handlers, payload size), into results/growth.json
 *                           [--inbox]           the transactional inbox (PostgreSQL at PG_URL, a database per case) against
 *                                               the hand-written one, beside the memory path and the `@Res()` bare
 *                                               route, into results/inbox-instructions.json (latest.json untouched)
 *                           [--instrumented-warmup]  count the old way: instrumentation on during the warm-up too
 *                                               (default: off until the driver is warm, `--instr-atstart=no`)
 *                           [--keep-dumps DIR]  copy callgrind's dumps there (callgrind_annotate them)
 *                           [--default-sched]   valgrind's default thread scheduling and libuv's 4 threads (default:
 *                                               --fair-sched=yes and UV_THREADPOOL_SIZE=1: counts that do not move with load)
 *                           [--real-clock]      the counted process reads the real clock (default: lib/fake-clock.c,
 *                                               compiled with cc and LD_PRELOADed: time advances with the work done)
 *                           [--jit-names]       also a profile per case: instructions by function, V8's generated code
 *                                               named (Node runs with --perf-basic-prof; lib/jit-profile.js), and by
 *                                               group (our lib, Nest, Fastify, Node, GC, native), in the result's `profile`
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { packageVersion } from './lib/package-version.js';
import { instructionsSummary } from './lib/results-report.js';
import { jitProfile } from './lib/jit-profile.js';
import { round } from './lib/stats.js';
import { ScenarioProcess, removeScenarioLogs } from './lib/scenario-process.js';

const benchDir = new URL('.', import.meta.url).pathname;
/** The counted Node process's flags (issue 31): every V8 heuristic that reads the clock or a random seed, pinned. */
export const PREDICTABLE_FLAGS = '--predictable --predictable-gc-schedule --random-seed=1 --hash-seed=1 --expose-gc';
const rootDir = new URL('..', import.meta.url).pathname;

const { values: args } = parseArgs({
  options: {
    deliveries: { type: 'string', default: '2000' },
    // Uninstrumented (see --instrumented-warmup): long enough for tier-up to settle.
    warmup: { type: 'string', default: '10000' },
    only: { type: 'string' },
    jobs: { type: 'string', default: '1' },
    'before-lib': { type: 'string' },
    lib: { type: 'string' },
    merge: { type: 'boolean', default: false },
    // Issue 31: V8's background threads (--single-threaded), and its time-driven GC heuristics (heap
    // growing from measured GC and mutator speed, the memory reducer's timers: --predictable-gc-schedule,
    // --predictable), seeds fixed. See NOTES.md, "Counts that repeat".
    'node-flags': { type: 'string', default: PREDICTABLE_FLAGS },
    out: { type: 'string' },
    growth: { type: 'boolean', default: false },
    client: { type: 'boolean', default: false },
    inbox: { type: 'boolean', default: false },
    // Issue 31: the warm-up runs with callgrind's instrumentation off (`--instr-atstart=no`, switched on
    // by `callgrind_control -i on` when the driver says it is warm). This flag restores the old way.
    'instrumented-warmup': { type: 'boolean', default: false },
    'keep-dumps': { type: 'string' },
    // Issue 31: the counted process reads a fake clock (lib/fake-clock.c, LD_PRELOAD): time advances with
    // its work, not with the wall. This flag gives it the real clock back.
    'real-clock': { type: 'boolean', default: false },
    // Issue 31: valgrind runs one thread at a time; by default the thread that holds its lock keeps it
    // until it blocks, so when Node's other threads (libuv's pool, the platform's workers) get to run
    // depends on the kernel's scheduling, that is on the machine's load. `--fair-sched=yes` hands the
    // lock round-robin, and one libuv thread (UV_THREADPOOL_SIZE=1) is enough for an in-process driver.
    // This flag restores valgrind's default scheduling and libuv's 4 threads. See NOTES.md.
    'default-sched': { type: 'boolean', default: false },
    'jit-names': { type: 'boolean', default: false },
  },
});
const deliveries = Number(args.deliveries);
const warmup = Number(args.warmup);
const outFile =
  args.out ??
  `${benchDir}results/${args.growth ? 'growth' : args.client ? 'client-instructions' : args.inbox ? 'inbox-instructions' : 'instructions'}.json`;

if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('valgrind is not installed (apt-get install valgrind): nothing counted.');
  process.exit(1);
}

const PRODUCTION = 'log, warn, error, fatal (Nest default minus debug/verbose)';
const NEST_DEFAULT = "Nest's default logger (every level, debug and verbose included)";
/** The cases: what the driver builds, and under which log levels. */
const CASES = [
  {
    id: 'harness',
    title: 'injection alone: a bare Node handler that reads the body and answers 200',
    options: { app: 'harness' },
  },
  {
    id: 'plain-node',
    title: 'the node:http limit: a plain request handler (HMAC, JSON.parse, Map dedupe), no framework',
    options: { app: 'plain-node' },
  },
  {
    id: 'plain-fastify',
    title: 'the Fastify limit: a plain Fastify app route (HMAC, JSON.parse, Map dedupe), no Nest',
    options: { app: 'plain-fastify' },
  },
  {
    id: 'baseline-express',
    title: 'bare Nest route, Express (HMAC by hand + JSON.parse)',
    options: { app: 'baseline', adapter: 'express' },
    levels: PRODUCTION,
  },
  {
    id: 'res-baseline-express',
    title: 'the cheapest bare Nest route, Express: `@Res()` reply, HMAC by hand, JSON.parse, Map dedupe',
    options: { app: 'baseline', adapter: 'express', reply: 'res' },
    levels: PRODUCTION,
  },
  {
    id: 'ours-express',
    title: 'nestjs-payments, Express, inline, memory store',
    options: { app: 'ours', adapter: 'express' },
    levels: PRODUCTION,
  },
  {
    id: 'ours-express-default-logs',
    title: "nestjs-payments, Express, at Nest's default log levels",
    options: { app: 'ours', adapter: 'express', logger: 'nest-default' },
    levels: NEST_DEFAULT,
  },
  {
    id: 'baseline-fastify',
    title: 'bare Nest route, Fastify (HMAC by hand + JSON.parse)',
    options: { app: 'baseline', adapter: 'fastify' },
    levels: PRODUCTION,
  },
  {
    id: 'res-baseline-fastify',
    title: 'the cheapest bare Nest route, Fastify: `@Res()` reply, HMAC by hand, JSON.parse, Map dedupe',
    options: { app: 'baseline', adapter: 'fastify', reply: 'res' },
    levels: PRODUCTION,
  },
  {
    id: 'ours-fastify',
    title: 'nestjs-payments, Fastify, inline, memory store',
    options: { app: 'ours', adapter: 'fastify' },
    levels: PRODUCTION,
  },
  // Issue 42: reconciliation is on by default when the app has the client and the receiver, as the bench
  // app has; these two count the receiver with it off, like for like with the build before that default.
  {
    id: 'ours-express-reconcile-off',
    title: 'nestjs-payments, Express, inline, memory store, `webhooks.reconcile: false`',
    options: { app: 'ours', adapter: 'express', reconcile: false },
    levels: PRODUCTION,
  },
  {
    id: 'ours-fastify-reconcile-off',
    title: 'nestjs-payments, Fastify, inline, memory store, `webhooks.reconcile: false`',
    options: { app: 'ours', adapter: 'fastify', reconcile: false },
    levels: PRODUCTION,
  },
  {
    id: 'ours-fastify-default-logs',
    title: "nestjs-payments, Fastify, at Nest's default log levels",
    options: { app: 'ours', adapter: 'fastify', logger: 'nest-default' },
    levels: NEST_DEFAULT,
  },
  {
    id: 'ours-fastify-log-deliveries',
    title: 'nestjs-payments, Fastify, `webhooks.logDeliveries: true` (one line per delivery), default levels',
    options: { app: 'ours', adapter: 'fastify', logger: 'nest-default', logDeliveries: true },
    levels: NEST_DEFAULT,
  },
];
/**
 * How cost grows (issue 22, item 5), with `--growth` (these cases only, plus the harness and
 * ours-fastify as the 1-handler, 1 KB point): handlers of other event types, handlers on the delivered
 * event, and the payload's size (fewer deliveries: a 1 MB body costs ~1000 x a 1 KB one).
 */
const GROWTH_CASES = [
  ...[10, 100].map((n) => ({
    id: `growth-types-${n}`,
    title: `ours, Fastify: ${n} event types with one handler each (one of them delivered)`,
    options: { app: 'ours', adapter: 'fastify', eventTypes: n },
    levels: PRODUCTION,
  })),
  {
    id: 'growth-handlers-10',
    title: 'ours, Fastify: 10 handlers on the delivered event',
    options: { app: 'ours', adapter: 'fastify', handlersOnEvent: 10 },
    levels: PRODUCTION,
  },
  ...[
    [64_000, 'growth-payload-64k', 400],
    [1_000_000, 'growth-payload-1m', 40],
  ].map(([bytes, id, n]) => ({
    id,
    title: `ours, Fastify: ${bytes.toLocaleString('en')}-byte payload`,
    options: {
      app: 'ours',
      adapter: 'fastify',
      payloadBytes: bytes,
      maxBodyBytes: 2_000_000,
      deliveries: n,
      warmup: 20,
    },
    levels: PRODUCTION,
  })),
  ...[
    [64_000, 'growth-plain-fastify-64k', 400],
    [1_000_000, 'growth-plain-fastify-1m', 40],
  ].map(([bytes, id, n]) => ({
    id,
    title: `plain Fastify route: ${bytes.toLocaleString('en')}-byte payload`,
    options: { app: 'plain-fastify', payloadBytes: bytes, maxBodyBytes: 2_000_000, deliveries: n, warmup: 20 },
  })),
];
/**
 * The API client (issue 31, item 3, with `--client`): instructions per call of ours
 * (`paymentIntents.retrieve`) and of raw keep-alive axios, one call at a time and 32 at a time, against
 * the stand-in API in a process of its own (not counted). `clientOptions` variants price one feature each.
 */
const CLIENT_CASES = [1, 32].flatMap((concurrency) => {
  const mode = concurrency === 1 ? 'sequential' : 'concurrent';
  return [
    { id: `client-axios-${mode}`, title: `raw keep-alive axios, ${mode}`, options: { client: 'axios', concurrency } },
    { id: `client-ours-${mode}`, title: `ours (PaymentsService), ${mode}`, options: { client: 'ours', concurrency } },
  ].map((c) => ({ ...c, driver: 'client' }));
});
/**
 * The inbox (issue 31, item 2, with `--inbox`): the receiver's instructions per delivery of ours with one
 * `{ transactional: true }` handler (pgTransactionRunner, the ledger INSERT prepared) and of the
 * hand-written `pg` inbox on the `@Res()` bare route; PostgreSQL's own work is not counted (another
 * process). The memory path and the bare route beside them price what the transaction adds on each side.
 */
const INBOX_CASES = [
  {
    id: 'ours-express-inbox',
    title: 'nestjs-payments, Express, memory store, one { transactional: true } handler (one prepared INSERT)',
    options: { app: 'ours', adapter: 'express', transactional: true },
    levels: PRODUCTION,
  },
  {
    id: 'hand-inbox-express',
    title:
      'the hand-written pg inbox (BEGIN with the dedupe INSERT, the ledger INSERT, COMMIT), `@Res()` bare route, Express',
    options: { app: 'baseline', adapter: 'express', reply: 'res', inbox: true },
    levels: PRODUCTION,
  },
];
if (args.client) CASES.splice(0, CASES.length, ...CLIENT_CASES);
if (args.inbox)
  CASES.splice(
    0,
    CASES.length,
    ...CASES.filter((c) => ['harness', 'ours-express', 'res-baseline-express'].includes(c.id)),
    ...INBOX_CASES,
  );
if (args.growth)
  CASES.splice(
    0,
    CASES.length,
    ...CASES.filter((c) => ['harness', 'ours-fastify', 'plain-fastify'].includes(c.id)),
    ...GROWTH_CASES,
  );
const libUrl = (dir) => new URL(`${dir.replace(/\/$/, '')}/index.js`, `file://${process.cwd()}/`).href;
const beforeLib = args['before-lib'] ? libUrl(args['before-lib']) : undefined;
if (args.lib)
  for (const c of CASES) if (c.options.app === 'ours' || c.options.client === 'ours') c.options.lib = libUrl(args.lib);
const before = beforeLib
  ? CASES.filter((c) => c.options.app === 'ours' && c.options.logDeliveries === undefined).map((c) => ({
      ...c,
      id: `${c.id}-before`,
      title: `${c.title} (before: ${args['before-lib']})`,
      options: { ...c.options, lib: beforeLib },
    }))
  : [];
const only = args.only ? new Set(args.only.split(',')) : undefined;
const selected = [...CASES, ...before].filter((c) => !only || only.has(c.id));

const nodeFlags = [
  ...args['node-flags'].split(' ').filter(Boolean),
  ...(args['jit-names']
    ? // Node 20 also writes V8's log (isolate-*-v8.log in the working directory) with it: sent nowhere.
      ['--perf-basic-prof', '--no-logfile-per-isolate', '--logfile=/dev/null']
    : []),
];
const workDir = mkdtempSync(join(tmpdir(), 'nestjs-payments-callgrind-'));

/**
 * V8's compilers called in the measured window (inclusive cost of the runtime entries that compile a
 * function: TurboFan with `--single-threaded` runs on the main thread, so its work lands in the count).
 * A one-off per function, not a cost of the delivery: how much of it falls in the window depends on
 * how far tier-up has got by the end of the warm-up (see NOTES.md, issue 31).
 */
const COMPILE_ENTRY =
  /^v8::internal::Runtime_(CompileOptimized|CompileOptimizedOSR|CompileLazy|CompileBaseline|InstallBaselineCode)\b/;
export function compileInstructions(dumpText) {
  return inclusiveOf(dumpText, COMPILE_ENTRY);
}

/**
 * V8's garbage collector in the window (inclusive cost of its entries, outermost only): scavenges,
 * mark-compacts and incremental marking steps, whether allocation, a task or a stack guard ran them.
 */
const GC_ENTRY =
  /^v8::internal::(Heap::CollectGarbage|Heap::FinalizeIncrementalMarking\w*|IncrementalMarking::(AdvanceOnAllocation|Step|AdvanceAndFinalizeIfComplete|AdvanceFromTask)|IncrementalMarkingJob::Task::RunInternal|ScavengeJob::Task::RunInternal|MinorGCJob::Task::RunInternal|Heap::HandleGCRequest|MemoryReducer::\w+)\b/;
export function gcInstructions(dumpText) {
  return inclusiveOf(dumpText, GC_ENTRY);
}
/** Inclusive cost in the window of the functions `entry` matches, counted where they are entered from outside. */
function inclusiveOf(dumpText, entry) {
  const names = new Map();
  let fn;
  let cfn;
  let callLine = false;
  let total = 0;
  for (const line of dumpText.split('\n')) {
    if (line.startsWith('fn=') || line.startsWith('cfn=')) {
      const m = /^c?fn=\((\d+)\)(?: (.*))?/.exec(line);
      if (m?.[2] !== undefined) names.set(m[1], m[2]);
      const name = m ? names.get(m[1]) : undefined;
      if (line[0] === 'f') fn = name;
      else cfn = name;
    } else if (line.startsWith('calls=')) callLine = true;
    else if (callLine) {
      callLine = false;
      if (entry.test(cfn ?? '') && !entry.test(fn ?? '')) total += Number(line.split(' ')[1]) || 0;
    }
  }
  return total;
}

/** The delivery drivers that can warm up uninstrumented (the client driver still counts its warm-up the old way). */
const uninstrumentedWarmup = (testCase) => !args['instrumented-warmup'] && testCase.driver !== 'client';
/**
 * The fake clock (not for the client cases: they wait on a real server's answers). Compiled once per run;
 * without a C compiler the cases read the real clock, and the result says so (`config.fakeClock`).
 */
const fakeClockLib = (() => {
  if (args['real-clock'] || selected.every((c) => c.driver === 'client')) return undefined;
  const so = join(workDir, 'fake-clock.so');
  const cc = spawnSync('cc', ['-O2', '-shared', '-fPIC', '-o', so, `${benchDir}lib/fake-clock.c`, '-ldl'], {
    encoding: 'utf8',
  });
  if (cc.status === 0) return so;
  console.warn(`No fake clock (cc failed: ${(cc.stderr || cc.error?.message || '').trim()}): the real clock is read.`);
  return undefined;
})();
const fakeClock = (testCase) => fakeClockLib !== undefined && testCase.driver !== 'client';

/** Runs one case under callgrind; resolves with the instructions counted over the measured deliveries. */
function count(testCase) {
  return new Promise((resolve, reject) => {
    const outPrefix = join(workDir, `${testCase.id}.out`);
    const signal = join(workDir, `${testCase.id}.instrumented`);
    const started = Date.now();
    let warmS;
    const child = spawn(
      'valgrind',
      [
        '--tool=callgrind',
        ...(uninstrumentedWarmup(testCase) ? ['--instr-atstart=no'] : []),
        `--callgrind-out-file=${outPrefix}`,
        '--zero-before=uv_os_gethostname',
        '--dump-before=uv_os_homedir',
        '--dump-instr=no',
        ...(args['default-sched'] ? [] : ['--fair-sched=yes']),
        process.execPath,
        ...nodeFlags,
        `${benchDir}lib/${testCase.driver === 'client' ? 'client-' : ''}instructions-driver.js`,
      ],
      {
        cwd: rootDir,
        env: {
          ...process.env,
          NODE_ENV: 'production',
          ...(args['default-sched'] ? {} : { UV_THREADPOOL_SIZE: '1' }),
          ...(uninstrumentedWarmup(testCase) ? { BENCH_INSTRUMENTATION_SIGNAL: signal } : {}),
          ...(fakeClock(testCase)
            ? { LD_PRELOAD: [fakeClockLib, process.env.LD_PRELOAD].filter(Boolean).join(' ') }
            : {}),
          BENCH_INSTRUCTIONS_OPTIONS: JSON.stringify({ warmup, deliveries, ...testCase.options }),
          BENCH_CLIENT_OPTIONS: JSON.stringify({
            warmup,
            calls: deliveries,
            baseUrl: clientBaseUrl,
            ...testCase.options,
          }),
        },
        // The app's log lines go to a file, as in production; valgrind's own report is on stderr.
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    let switched = false;
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-20_000);
      // The driver is warm (uninstrumented warm-up): instrumentation on, then let it go on.
      if (!switched && stderr.includes('{"type":"instructions-driver-warm"')) {
        switched = true;
        warmS = (Date.now() - started) / 1000;
        execFile('callgrind_control', ['-i', 'on', String(child.pid)], (error, stdout) => {
          if (error || !/OK/.test(stdout)) {
            child.kill();
            stderr += `\ncallgrind_control -i on ${child.pid} failed: ${error?.message ?? stdout}`;
            return;
          }
          writeFileSync(signal, '');
        });
      }
    });
    child.on('exit', (code) => {
      const driver = stderr.split('\n').find((line) => line.startsWith('{"type":"instructions-driver"'));
      const dumpFiles = readdirSync(workDir)
        .filter((f) => f.startsWith(`${testCase.id}.out`))
        .map((f) => join(workDir, f));
      const dumpFile = dumpFiles.find((f) =>
        /^desc: Trigger: --dump-before=uv_os_homedir/m.test(readFileSync(f, 'utf8').slice(0, 4000)),
      );
      const dump = dumpFile === undefined ? undefined : readFileSync(dumpFile, 'utf8');
      // `totals` (not `summary`) adds up to valgrind's "Collected" count over the parts of a run.
      const total = dump?.match(/^totals: (\d+)/m)?.[1];
      if (code !== 0 || !driver || total === undefined) {
        reject(
          new Error(
            `${testCase.id}: exit ${code}, ${driver ? 'no callgrind dump' : 'the driver did not finish'}: ${stderr.trim().split('\n').slice(-6).join(' | ')}`,
          ),
        );
        return;
      }
      resolve({
        instructions: Number(total),
        compile: compileInstructions(dump),
        gc: gcInstructions(dump),
        warmS,
        wallS: (Date.now() - started) / 1000,
        driver: JSON.parse(driver),
        profile: args['jit-names'] ? jitProfile(dumpFile, testCase.options.deliveries ?? deliveries) : undefined,
      });
    });
  });
}

console.log(
  `Counting instructions: ${selected.length} case(s), ${warmup} warm-up + ${deliveries} measured deliveries each, ${args.jobs} at a time (valgrind is slow: minutes per case)`,
);
/** With --merge, the cases counted by an earlier run (same deliveries and warm-up) are kept. */
const earlier = args.merge && existsSync(outFile) ? JSON.parse(readFileSync(outFile, 'utf8')) : undefined;
if (earlier && (earlier.config.deliveries !== deliveries || earlier.config.warmup !== warmup)) {
  console.error(
    `--merge: ${outFile} counted ${earlier.config.warmup} + ${earlier.config.deliveries} deliveries, this run ${warmup} + ${deliveries}`,
  );
  process.exit(1);
}
const results = { ...(earlier?.cases ?? {}) };
/** The stand-in API of the client cases: its own process, outside valgrind. */
const apiServer = selected.some((c) => c.driver === 'client')
  ? await ScenarioProcess.start({ file: `${benchDir}scenarios/intent-api.server.js`, cwd: rootDir })
  : undefined;
const clientBaseUrl = apiServer ? `http://127.0.0.1:${apiServer.port}` : undefined;
const queue = [...selected];
await Promise.all(
  Array.from({ length: Math.max(1, Number(args.jobs)) }, async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      try {
        const startLoad = round(loadavg()[0], 2);
        const r = await count(c);
        results[c.id] = {
          title: c.title,
          logLevels: c.levels ?? null,
          instructionsPerDelivery: Math.round(r.instructions / (c.options.deliveries ?? deliveries)),
          // The same without V8's compilers (tier-up that the warm-up had not finished): the steady state.
          compileInstructionsPerDelivery: Math.round(r.compile / (c.options.deliveries ?? deliveries)),
          steadyInstructionsPerDelivery: Math.round(
            (r.instructions - r.compile) / (c.options.deliveries ?? deliveries),
          ),
          // V8's garbage collector in the window (diagnostic: which part of a count moves between runs).
          gcInstructionsPerDelivery: Math.round(r.gc / (c.options.deliveries ?? deliveries)),
          loadAverage: round(loadavg()[0], 2),
          loadAverageAtStart: startLoad,
          ...(c.options.payloadBytes ? { payloadBytes: c.options.payloadBytes } : {}),
          countedAt: new Date().toISOString(),
          wallS: round(r.wallS, 0),
          ...(r.warmS !== undefined ? { uninstrumentedWarmupS: round(r.warmS, 0) } : {}),
          ...(r.profile !== undefined ? { profile: r.profile } : {}),
        };
        console.log(
          `  ${c.id.padEnd(34)} ${results[c.id].instructionsPerDelivery.toLocaleString('en').padStart(12)} instructions/delivery, ` +
            `${results[c.id].steadyInstructionsPerDelivery.toLocaleString('en').padStart(12)} without compiling, ` +
            `${results[c.id].compileInstructionsPerDelivery.toLocaleString('en')} compiling, ${results[c.id].gcInstructionsPerDelivery.toLocaleString('en')} GC  ` +
            `(${r.wallS.toFixed(0)} s, load ${startLoad} -> ${results[c.id].loadAverage})`,
        );
        if (r.profile) {
          const groups = Object.entries(r.profile.groups).filter(([, ir]) => ir > 0);
          console.log(`    ${groups.map(([group, ir]) => `${group} ${ir.toLocaleString('en')}`).join(' | ')}`);
        }
      } catch (error) {
        results[c.id] = { title: c.title, error: error.message };
        console.log(`  ${c.id.padEnd(34)} FAILED: ${error.message}`);
      }
    }
  }),
);
if (args['keep-dumps']) {
  mkdirSync(args['keep-dumps'], { recursive: true });
  for (const f of readdirSync(workDir)) if (f.includes('.out')) cpSync(join(workDir, f), join(args['keep-dumps'], f));
}
rmSync(workDir, { recursive: true, force: true });
if (apiServer) {
  await apiServer.close();
  removeScenarioLogs();
}

const per = (id) => results[id]?.instructionsPerDelivery;
const ratioOf = (a, b) => (per(a) && per(b) ? round(per(a) / per(b), 3) : null);
/** Ours over the baseline, and the same net of the injection's own cost (harness) on both sides. */
const pair = (ours, baseline) => ({
  ratio: ratioOf(ours, baseline),
  netOfHarness:
    per(ours) && per(baseline) && per('harness')
      ? round((per(ours) - per('harness')) / (per(baseline) - per('harness')), 3)
      : null,
});
const ratios = {
  expressVsBaseline: pair('ours-express', 'baseline-express'),
  fastifyVsBaseline: pair('ours-fastify', 'baseline-fastify'),
  expressDefaultLogsVsBaseline: pair('ours-express-default-logs', 'baseline-express'),
  fastifyDefaultLogsVsBaseline: pair('ours-fastify-default-logs', 'baseline-fastify'),
  fastifyLogDeliveriesVsBaseline: pair('ours-fastify-log-deliveries', 'baseline-fastify'),
  // The physical limits (issue 22): ours over a plain Fastify route and over plain node:http.
  fastifyVsPlainFastify: pair('ours-fastify', 'plain-fastify'),
  // Issue 31: against the cheapest bare Nest route (`@Res()`, Map dedupe) of each adapter.
  expressVsResBaseline: pair('ours-express', 'res-baseline-express'),
  fastifyVsResBaseline: pair('ours-fastify', 'res-baseline-fastify'),
  // Issue 31, item 3: the client over raw keep-alive axios, per call.
  clientSequentialVsAxios: { ratio: ratioOf('client-ours-sequential', 'client-axios-sequential'), netOfHarness: null },
  clientConcurrentVsAxios: { ratio: ratioOf('client-ours-concurrent', 'client-axios-concurrent'), netOfHarness: null },
  expressVsNodeLimit: pair('ours-express', 'plain-node'),
  // Issue 31, item 2 (`--inbox`): the receiver's side of the inbox against the hand-written one.
  inboxVsHandWritten: pair('ours-express-inbox', 'hand-inbox-express'),
  baselineFastifyVsPlainFastify: pair('baseline-fastify', 'plain-fastify'),
  baselineExpressVsNodeLimit: pair('baseline-express', 'plain-node'),
};
if (Object.keys(results).some((id) => id.endsWith('-before'))) {
  Object.assign(ratios, {
    beforeExpressVsBaseline: pair('ours-express-before', 'baseline-express'),
    beforeInboxVsHandWritten: pair('ours-express-inbox-before', 'hand-inbox-express'),
    beforeFastifyVsBaseline: pair('ours-fastify-before', 'baseline-fastify'),
    beforeExpressDefaultLogsVsBaseline: pair('ours-express-default-logs-before', 'baseline-express'),
    beforeFastifyDefaultLogsVsBaseline: pair('ours-fastify-default-logs-before', 'baseline-fastify'),
  });
}

const output = {
  date: new Date().toISOString(),
  tool: spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).stdout.trim(),
  machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length },
  versions: { node: process.version, nest: packageVersion('@nestjs/core', rootDir) },
  config: {
    warmup,
    deliveries,
    nodeFlags: nodeFlags.join(' '),
    warmupInstrumented: Boolean(args['instrumented-warmup']),
    fairScheduling: !args['default-sched'],
    fakeClock: fakeClockLib !== undefined,
    injection: 'light-my-request, sequential, in process',
    payloadBytes: 1024,
  },
  cases: results,
  ratios,
};
mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true });
writeFileSync(outFile, `${JSON.stringify(output, null, 2)}\n`);
// latest.json carries the instruction figures too (its other keys are the wrk run's, kept as they are).
const latestFile = new URL('./results/latest.json', import.meta.url).pathname;
if (!args.out && !args.inbox && existsSync(latestFile)) {
  const latest = JSON.parse(readFileSync(latestFile, 'utf8'));
  if (args.growth) {
    latest.growth = {
      countedAt: output.date,
      instructionsPerDelivery: Object.fromEntries(
        Object.entries(results).map(([id, r]) => [id, r.instructionsPerDelivery ?? null]),
      ),
    };
  } else {
    const read = (name) =>
      existsSync(`${benchDir}results/${name}.json`)
        ? JSON.parse(readFileSync(`${benchDir}results/${name}.json`, 'utf8'))
        : undefined;
    latest.instructions = args.client
      ? instructionsSummary(read('instructions'), output)
      : instructionsSummary(output, read('client-instructions'));
  }
  writeFileSync(latestFile, `${JSON.stringify(latest, null, 2)}\n`);
}
console.log(`\nOurs over the bare route (instructions per delivery; net of the injection's own cost in brackets):`);
for (const [name, value] of Object.entries(ratios))
  console.log(`  ${name.padEnd(36)} ${value.ratio ?? 'n/a'}  (${value.netOfHarness ?? 'n/a'})`);
console.log(`Wrote ${outFile}`);
process.exit(Object.values(results).some((r) => r.error) ? 1 : 0);
