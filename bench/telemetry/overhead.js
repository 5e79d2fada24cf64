#!/usr/bin/env node
/**
 * What telemetry costs per delivery: the same app (bench/lib/ours-app.js: Express or Fastify, memory
 * store, one no-op handler), driven in process by bench/telemetry/driver.js, in three modes
 * (see otel-mode.mjs): `off` (no @opentelemetry/api), `api` (API, no SDK), `sdk` (SDK registered).
 *
 *   node bench/telemetry/overhead.js --lib /tmp/build/lib/index.js [--adapter express] [--deliveries 3000]
 *        [--warmup 500] [--rounds 5] [--callgrind] [--callgrind-deliveries 400] [--modes off,api,sdk]
 *
 * CPU: user+system time of the driver process over the measured deliveries (process.cpuUsage), median
 * of `--rounds` processes per mode, modes interleaved so that machine noise hits them alike.
 * `--callgrind`: also instructions per delivery under valgrind (noise-free, slow).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const benchDir = new URL('..', import.meta.url).pathname;
const { values: args } = parseArgs({
  options: {
    lib: { type: 'string' },
    adapter: { type: 'string', default: 'express' },
    deliveries: { type: 'string', default: '3000' },
    warmup: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '5' },
    callgrind: { type: 'boolean', default: false },
    'callgrind-deliveries': { type: 'string', default: '400' },
    modes: { type: 'string', default: 'off,api,sdk' },
  },
});
const lib = args.lib ? pathToFileURL(resolve(args.lib)).href : undefined;
const modes = args.modes.split(',');
const preload = new URL('./otel-mode.mjs', import.meta.url).href;

/** Runs the driver once; resolves with its stderr lines parsed as JSON where they are. */
function run(mode, { deliveries, warmup, valgrindOut }) {
  const options = { adapter: args.adapter, deliveries, warmup, ...(lib ? { lib } : {}) };
  const node = [process.execPath, '--import', preload, join(benchDir, 'telemetry/driver.js')];
  const [command, ...rest] = valgrindOut
    ? [
        'valgrind',
        '--tool=callgrind',
        `--callgrind-out-file=${valgrindOut}`,
        '--zero-before=uv_os_gethostname',
        '--dump-before=uv_os_homedir',
        '--dump-instr=no',
        ...node,
      ]
    : node;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, rest, {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        OTEL_BENCH_MODE: mode,
        BENCH_TELEMETRY_OPTIONS: JSON.stringify(options),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${mode}: exit ${code}: ${stderr.split('\n').slice(-8).join(' | ')}`));
      resolvePromise(
        stderr.split('\n').flatMap((line) => {
          try {
            return [JSON.parse(line)];
          } catch {
            return [];
          }
        }),
      );
    });
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const deliveries = Number(args.deliveries);
const cpu = Object.fromEntries(modes.map((mode) => [mode, []]));
for (let round = 0; round < Number(args.rounds); round++) {
  for (const mode of modes) {
    const lines = await run(mode, { deliveries, warmup: Number(args.warmup) });
    const probe = lines.find((line) => line.type === 'telemetry-driver');
    if (!probe) throw new Error(`${mode}: the driver did not finish`);
    cpu[mode].push(probe.cpuMicros / deliveries);
  }
}
const result = { adapter: args.adapter, deliveries, rounds: Number(args.rounds), cpuMicrosPerDelivery: {} };
if (Number(args.rounds) > 0)
  for (const mode of modes)
    result.cpuMicrosPerDelivery[mode] = {
      median: Math.round(median(cpu[mode]) * 10) / 10,
      all: cpu[mode].map((v) => Math.round(v * 10) / 10),
    };

if (args.callgrind) {
  const dir = mkdtempSync(join(tmpdir(), 'payments-otel-callgrind-'));
  const callgrindDeliveries = Number(args['callgrind-deliveries']);
  result.instructionsPerDelivery = {};
  try {
    for (const mode of modes) {
      const out = join(dir, `${mode}.out`);
      await run(mode, { deliveries: callgrindDeliveries, warmup: 100, valgrindOut: out });
      const dump = readdirSync(dir)
        .filter((name) => name.startsWith(`${mode}.out`))
        .map((name) => readFileSync(join(dir, name), 'utf8'))
        .find((text) => /^desc: Trigger: --dump-before=uv_os_homedir/m.test(text));
      // `totals` (not `summary`) adds up to valgrind's "Collected" count over the parts of a run.
      const total = Number(dump?.match(/^totals: (\d+)/m)?.[1] ?? NaN);
      result.instructionsPerDelivery[mode] = Math.round(total / callgrindDeliveries);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(JSON.stringify(result, null, 2));
