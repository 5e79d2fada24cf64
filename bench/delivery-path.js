#!/usr/bin/env node
/**
 * Which files and folders of lib/ run while ONE webhook delivery is handled (issue 41), after boot and
 * after a warm-up delivery, per setup: inline processing with the memory store on Express and on Fastify,
 * and the transactional inbox (one `{ transactional: true }` handler, pgTransactionRunner, PostgreSQL at
 * PG_URL) on Express. The app is the bench's (lib/ours-app.js, compiled lib/ from dist-sample/lib).
 *
 *   npm run bench:path                  compiles lib/ into dist-sample/ first, then runs every setup
 *   node bench/delivery-path.js [--only id,id] [--warmup 1] [--out /tmp/payments-delivery-path.json]
 *
 * Method. Each setup runs in a child process of its own (this file with `--case ID`), which, before it
 * imports Nest or the library, opens a `node:inspector` Session and starts V8's precise coverage
 * (`Profiler.startPreciseCoverage({ callCount: true, detailed: true })`: call counts and block counts,
 * on every function compiled from then on). It boots the app listening on 127.0.0.1, sends `--warmup`
 * signed deliveries over loopback HTTP, then calls `Profiler.takePreciseCoverage` once and throws the
 * answer away: in precise-count mode, taking coverage resets every count to 0. It then takes an idle
 * window (no request, IDLE_MS) as a control, and finally sends ONE signed delivery (a new event id, a new
 * connection), waits for its 200 and SETTLE_MS more, and takes coverage again.
 *
 * The rule: a script under dist-sample/lib ran during the delivery when one of its functions has a range
 * with count > 0. Every count is one since the reset, so:
 * - a function called during the delivery has its own range (the first one, the whole function) > 0;
 * - an async function (or generator) that was entered before the reset and resumed during the delivery
 *   has its own range at 0 (a resumption is not a call) and the block after its `await` > 0: it ran, and
 *   is counted through that block count;
 * - a module's top level (the function with the empty name whose range covers the whole script) ran at
 *   load, before the reset: its counts are 0 afterwards, so it only counts if top-level code ran during
 *   the delivery (a module first imported then, or a top-level `await` resumed then). V8 leaves out of
 *   the answer functions with nothing counted, so a script that did not run at all is not listed.
 * A compiled file dist-sample/lib/a/b.js is reported as lib/a/b.ts, its folder as `a` (the path relative
 * to lib/ without the file name; `.` for lib/ itself). The window holds whatever else ran meanwhile
 * (timers): the idle window before it, as long, lists what runs without a delivery (`idleFiles`).
 * The result, per setup: files, folders, the functions that ran per file; into --out (JSON).
 */
import { execFileSync, fork } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { Session } from 'node:inspector/promises';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WEBHOOK_PATH } from './lib/bench-constants.js';
import { signedDelivery } from './lib/signed-payloads.js';

const rootDir = fileURLToPath(new URL('..', import.meta.url));
const compiledLibDir = fileURLToPath(new URL('../dist-sample/lib/', import.meta.url));
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The idle control window, and how long the delivery's window stays open after its answer. */
const IDLE_MS = 100;
const SETTLE_MS = 50;
/** A child that has not reported by then is killed (boot, warm-up and the delivery take ~2 s). */
const CHILD_TIMEOUT_MS = 120_000;
const REQUEST_TIMEOUT_MS = 10_000;

const SETUPS = [
  {
    id: 'inline-express',
    title: 'inline processing, memory store, Express',
    options: { adapter: 'express' },
  },
  {
    id: 'inline-fastify',
    title: 'inline processing, memory store, Fastify',
    options: { adapter: 'fastify' },
  },
  {
    id: 'inbox-express',
    title: 'inline, transactional inbox (one { transactional: true } handler, pgTransactionRunner), Express',
    options: { adapter: 'express', transactional: true },
    postgres: true,
  },
];

const { values: args } = parseArgs({
  options: {
    case: { type: 'string' },
    only: { type: 'string' },
    warmup: { type: 'string', default: '1' },
    out: { type: 'string', default: '/tmp/payments-delivery-path.json' },
  },
});

if (args.case) await runCase(args.case, Number(args.warmup));
else await main();

/** The parent: one child per setup, the table, the JSON. */
async function main() {
  if (!existsSync(`${compiledLibDir}index.js`)) {
    console.error('dist-sample/lib/index.js is missing: run `npm run bench:path` (it compiles lib/ first).');
    process.exit(1);
  }
  const only = args.only?.split(',');
  const setups = SETUPS.filter((s) => !only || only.includes(s.id));
  const results = [];
  for (const setup of setups) {
    const skip = setup.postgres ? await postgresUnavailable() : undefined;
    const result = skip
      ? { id: setup.id, title: setup.title, skipped: skip }
      : { title: setup.title, ...(await runChild(setup.id)) };
    results.push(result);
    printSetup(result);
  }
  console.log('\nSummary (files and folders of lib/ that ran during one delivery):');
  for (const r of results) {
    const line = r.skipped
      ? `skipped: ${r.skipped}`
      : r.error
        ? `failed: ${r.error}`
        : `${r.fileCount} files in ${r.folderCount} folders: ${Object.keys(r.folders).join(', ')}`;
    console.log(`  ${r.id.padEnd(16)} ${line}`);
  }
  const report = {
    what: 'lib/ files and folders that ran while one webhook delivery was handled (issue 41)',
    date: new Date().toISOString(),
    commit: gitCommit(),
    node: process.version,
    warmupDeliveries: Number(args.warmup),
    rule:
      'a compiled script under dist-sample/lib ran when one of its functions has a coverage range with count > 0 ' +
      'after a takePreciseCoverage reset (precise call and block counts); module top level only if it ran in the window',
    idleMs: IDLE_MS,
    settleMs: SETTLE_MS,
    setups: results,
  };
  writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwrote ${args.out}`);
  if (results.some((r) => r.error)) process.exitCode = 1;
}

function printSetup(r) {
  console.log(`\n${r.id}: ${r.title}`);
  if (r.skipped) return console.log(`  skipped: ${r.skipped}`);
  if (r.error) return console.log(`  failed: ${r.error}`);
  const width = Math.max(...Object.keys(r.folders).map((f) => f.length), 6);
  console.log(`  ${'folder'.padEnd(width)}  files`);
  for (const [folder, files] of Object.entries(r.folders))
    console.log(`  ${folder.padEnd(width)}  ${files.length}  ${files.map((f) => f.split('/').pop()).join(', ')}`);
  console.log(`  total: ${r.fileCount} files, ${r.folderCount} folders`);
  if (r.idleFiles.length > 0) console.log(`  ran in the idle window too (no delivery): ${r.idleFiles.join(', ')}`);
}

/** Why the inbox setup cannot run here, or undefined when PostgreSQL at PG_URL answers. */
async function postgresUnavailable() {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL at PG_URL (${PG_URL}) not reachable: ${error.message}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Runs this file with `--case ID`; resolves with the child's report (or an error). */
function runChild(id) {
  return new Promise((resolve) => {
    const child = fork(fileURLToPath(import.meta.url), ['--case', id, '--warmup', args.warmup], {
      cwd: rootDir,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    let report;
    child.on('message', (message) => (report = message));
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (report && !report.error && code === 0) return resolve(report);
      const why = report?.error ?? `exited with ${signal ?? code}`;
      resolve({ id, error: `${why}\n${output.slice(-2000)}` });
    });
  });
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: rootDir, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** The child: coverage on, the app booted and warmed, the idle window, the one delivery. */
async function runCase(id, warmup) {
  const setup = SETUPS.find((s) => s.id === id);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });

  // Nest, the library and the bench app are imported only now, with coverage on.
  const { createOursApp } = await import('./lib/ours-app.js');
  const { handlerCounter } = await import('./lib/scenario-ipc.js');
  const { app, cleanups } = await createOursApp(setup.options);
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address();
    for (let i = 0; i < warmup; i++) await deliver(port);
    const runsBefore = handlerCounter.runs;

    await session.post('Profiler.takePreciseCoverage'); // the reset: every count back to 0
    await sleep(IDLE_MS);
    const idle = ranScripts((await session.post('Profiler.takePreciseCoverage')).result);

    const started = performance.now();
    const status = await deliver(port);
    await sleep(SETTLE_MS);
    const ran = ranScripts((await session.post('Profiler.takePreciseCoverage')).result);
    const windowMs = Math.round(performance.now() - started);
    await session.post('Profiler.stopPreciseCoverage');
    await session.post('Profiler.disable');
    session.disconnect();

    if (handlerCounter.runs !== runsBefore + 1)
      throw new Error(`the handler ran ${handlerCounter.runs - runsBefore} times for the measured delivery`);
    const folders = {};
    for (const file of Object.keys(ran).sort()) (folders[folderOf(file)] ??= []).push(file);
    const sortedFolders = Object.fromEntries(Object.entries(folders).sort(([a], [b]) => a.localeCompare(b)));
    await report({
      id,
      status,
      warmupDeliveries: warmup,
      handlerRuns: handlerCounter.runs,
      windowMs,
      fileCount: Object.keys(ran).length,
      folderCount: Object.keys(sortedFolders).length,
      folders: sortedFolders,
      files: Object.fromEntries(Object.entries(ran).sort(([a], [b]) => a.localeCompare(b))),
      idleFiles: Object.keys(idle).sort(),
    });
  } catch (error) {
    await report({ id, error: error.stack ?? String(error) });
  } finally {
    await app.close();
    for (const cleanup of cleanups) await cleanup();
  }
  // Ends by itself even if a handle (a pool, a timer) were left open; the report has been sent.
  process.exit(0);
}

/** Sends the child's report to the parent; resolves once it is written to the IPC channel. */
function report(message) {
  return new Promise((resolve, reject) => process.send(message, (error) => (error ? reject(error) : resolve())));
}

/**
 * lib/ files that ran in a coverage answer (see the rule above), each with the functions that ran:
 * `{ 'lib/a/b.ts': ['name (calls)', ...] }`; `(resumed)` when only a block counted.
 */
function ranScripts(scripts) {
  const ran = {};
  for (const script of scripts) {
    if (!script.url.startsWith('file://')) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(compiledLibDir) || !path.endsWith('.js')) continue;
    const functions = [];
    for (const fn of script.functions) {
      if (!fn.ranges.some((range) => range.count > 0)) continue;
      const calls = fn.ranges[0].count;
      const name = fn.functionName || (fn.ranges[0].startOffset === 0 ? '(top level)' : '(anonymous)');
      functions.push(calls > 0 ? `${name} (${calls})` : `${name} (resumed)`);
    }
    if (functions.length > 0) ran[libPath(path)] = functions;
  }
  return ran;
}

/** dist-sample/lib/a/b.js -> lib/a/b.ts (the source; the .js path when there is no such source). */
function libPath(compiled) {
  const source = `lib/${relative(compiledLibDir, compiled).replace(/\.js$/, '.ts')}`;
  return existsSync(`${rootDir}${source}`) ? source : relative(rootDir, compiled);
}

/** lib/webhooks/dispatch/x.ts -> webhooks/dispatch; lib/x.ts -> '.'. */
function folderOf(file) {
  return dirname(file.replace(/^(dist-sample\/)?lib\//, ''));
}

/** One signed delivery (a new event id, a new connection) over loopback; resolves with the status, 200 or throws. */
function deliver(port) {
  const { body, headers } = signedDelivery();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: WEBHOOK_PATH,
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        let answer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (answer += chunk));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(res.statusCode)
            : reject(new Error(`the delivery answered ${res.statusCode}: ${answer.slice(0, 200)}`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
