#!/usr/bin/env node
/**
 * Profiles the hot path: runs one scenario server under `node --cpu-prof` (profile written to a
 * temporary folder, never committed), drives it with autocannon like bench/run.js does, and prints
 * where the server's CPU time went: by area (our lib/, Nest, the HTTP framework, Node, GC) and the
 * functions of ours with the most self time, and the heaviest functions overall.
 *
 *   npm run bench -- --quick            (compiles lib/ first; or: npx tsc -p tsconfig.sample.json)
 *   node bench/profile.js [--scenario ours-express] [--duration 10] [--top 25] [--options '{"logger":["warn"]}']
 *   node bench/profile.js --analyze /tmp/.../CPU.xxx.cpuprofile     (only print an existing profile)
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadRun } from './lib/load-run.js';
import { ScenarioProcess, removeScenarioLogs } from './lib/scenario-process.js';
import { SCENARIOS } from './lib/scenarios.js';
import { DeliveryPool, signedDelivery, stripeSignedDelivery } from './lib/signed-payloads.js';

const { values: args } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'ours-express' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    top: { type: 'string', default: '25' },
    analyze: { type: 'string' },
    options: { type: 'string' },
  },
});
const rootDir = new URL('..', import.meta.url).pathname;

/** Which area a call frame belongs to, from its script URL. */
function areaOf(frame) {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : 'native';
  if (/\/dist-sample\/(.+\/)?lib\//.test(url)) return 'ours (lib/)';
  if (url.includes('/node_modules/@nestjs/')) return 'nest';
  if (
    /node_modules\/(express|router|body-parser|raw-body|finalhandler|send|serve-static|on-finished|type-is|content-type|qs|iconv-lite|cookie|accepts|negotiator|mime)/.test(
      url,
    )
  )
    return 'express & body-parser';
  if (
    /node_modules\/(fastify|@fastify|find-my-way|light-my-request|avvio|pino|fast-json-stringify|secure-json-parse)/.test(
      url,
    )
  )
    return 'fastify';
  if (url.includes('/node_modules/lru-cache/')) return 'lru-cache';
  if (url.includes('/node_modules/')) return 'other packages';
  if (url.startsWith('node:')) return 'node';
  if (url.includes('/bench/')) return 'bench scenario';
  return 'other';
}

function shortUrl(url) {
  const at = url.indexOf('/dist-sample/');
  if (at >= 0) return url.slice(at + '/dist-sample/'.length).replace(/\.js$/, '.ts');
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + '/node_modules/'.length);
  return url.replace(/^file:\/\//, '');
}

/** Self and inclusive time per function, and per area, of a .cpuprofile. */
export function analyzeProfile(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, { ...n, self: 0 }]));
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    if (node) node.self += profile.timeDeltas[i] ?? 0;
  }
  const parent = new Map();
  for (const n of byId.values()) for (const c of n.children ?? []) parent.set(c, n.id);
  let total = 0;
  let idle = 0;
  const fns = new Map();
  const areas = new Map();
  const keyOf = (f) => `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
  for (const n of byId.values()) {
    total += n.self;
    if (n.callFrame.functionName === '(idle)') idle += n.self;
    const key = keyOf(n.callFrame);
    const entry = fns.get(key) ?? { key, area: areaOf(n.callFrame), self: 0, inclusive: 0 };
    entry.self += n.self;
    fns.set(key, entry);
    areas.set(entry.area, (areas.get(entry.area) ?? 0) + n.self);
  }
  // Inclusive time: a sample counts once for every distinct function on its stack.
  for (let i = 0; i < profile.samples.length; i++) {
    const seen = new Set();
    for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const key = keyOf(byId.get(id).callFrame);
      if (seen.has(key)) continue;
      seen.add(key);
      fns.get(key).inclusive += profile.timeDeltas[i] ?? 0;
    }
  }
  const busy = total - idle;
  return { busyMs: busy / 1000, idleMs: idle / 1000, fns: [...fns.values()], areas: [...areas.entries()], busy };
}

function printAnalysis(a, top, requests) {
  const pct = (us) => `${((100 * us) / a.busy).toFixed(1).padStart(5)}%`;
  const perRequest = (us) => (requests ? `  ${(us / requests).toFixed(1).padStart(6)} µs/req` : '');
  console.log(
    `\nCPU busy ${a.busyMs.toFixed(0)} ms, idle ${a.idleMs.toFixed(0)} ms; percentages are of busy time (start-up included).\n`,
  );
  console.log(`Self time by area${requests ? ` (and per request, over the ${requests} requests served)` : ''}:`);
  for (const [area, us] of a.areas.filter(([area]) => area !== '(idle)').sort((x, y) => y[1] - x[1]))
    console.log(`  ${pct(us)}${perRequest(us)}  ${area}`);
  console.log(`\nOur functions (lib/) by self time (inclusive in brackets):`);
  for (const f of a.fns
    .filter((f) => f.area === 'ours (lib/)')
    .sort((x, y) => y.self - x.self)
    .slice(0, top)) {
    console.log(`  ${pct(f.self)}  [${pct(f.inclusive)}]  ${f.key}`);
  }
  console.log(`\nOur functions (lib/) by inclusive time:`);
  for (const f of a.fns
    .filter((f) => f.area === 'ours (lib/)')
    .sort((x, y) => y.inclusive - x.inclusive)
    .slice(0, top)) {
    console.log(`  ${pct(f.inclusive)}  (self ${pct(f.self)})  ${f.key}`);
  }
  console.log(`\nAll functions by self time:`);
  for (const f of a.fns
    .filter((f) => f.key !== '(idle) :0')
    .sort((x, y) => y.self - x.self)
    .slice(0, top)) {
    console.log(`  ${pct(f.self)}  ${f.area.padEnd(22)} ${f.key}`);
  }
}

if (args.analyze) {
  printAnalysis(analyzeProfile(JSON.parse(readFileSync(args.analyze, 'utf8'))), Number(args.top));
  process.exit(0);
}

const scenario = SCENARIOS.find((s) => s.id === args.scenario);
if (!scenario) throw new Error(`unknown scenario ${args.scenario}; one of ${SCENARIOS.map((s) => s.id).join(', ')}`);
const dir = mkdtempSync(join(tmpdir(), 'nestjs-payments-cpuprof-'));
const pool = new DeliveryPool(
  () => (scenario.payload === 'stripe' ? stripeSignedDelivery() : signedDelivery()),
  150_000,
);
const child = await ScenarioProcess.start({
  file: scenario.file,
  options: { ...scenario.options, ...(args.options ? JSON.parse(args.options) : {}) },
  cwd: rootDir,
  execArgv: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
});
await loadRun({ port: child.port, path: scenario.path, pool, connections: Number(args.connections), durationS: 2 });
const warm = pool.used;
const run = await loadRun({
  port: child.port,
  path: scenario.path,
  pool,
  connections: Number(args.connections),
  durationS: Number(args.duration),
});
await child.close();
removeScenarioLogs();
console.log(
  `${scenario.id}: ${run.rps.toFixed(0)} req/s, p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms, non-2xx ${run.non2xx} (under the profiler)`,
);
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile written in ${dir}`);
console.log(`profile: ${join(dir, file)}`);
printAnalysis(analyzeProfile(JSON.parse(readFileSync(join(dir, file), 'utf8'))), Number(args.top), warm + run.requests);
