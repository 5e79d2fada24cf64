/**
 * The process that bench/callgrind.js runs under `valgrind --tool=callgrind`: builds one app (ours,
 * the bare baseline route, or the harness alone), then sends it `warmup + deliveries` signed deliveries
 * one after another, in process, through light-my-request (no socket, no other process: what is counted
 * is this app's work plus the small, fixed cost of the injection, which the `harness` case measures).
 * Every delivery must answer 200 and run the handler once. All deliveries are signed before the first
 * is sent. The measured deliveries are marked for callgrind by two native calls that nothing else
 * makes here: `os.hostname()` (uv_os_gethostname: callgrind zeroes its counters) just before them and
 * `os.homedir()` (uv_os_homedir: callgrind dumps) just after, so the dump holds the deliveries alone.
 * Counts that repeat (issue 31, NOTES.md): the warm-up runs uninstrumented (BENCH_INSTRUMENTATION_SIGNAL),
 * a full GC (`--expose-gc`) 2,000 deliveries before its end puts every window at the same point of V8's GC
 * cycle, and the event ids are derived from the delivery's index, so every run sends the same bytes.
 * Options: BENCH_INSTRUCTIONS_OPTIONS (JSON)
 *   { app: 'ours' | 'baseline' | 'harness' | 'plain-node' | 'plain-fastify', adapter, logger, logDeliveries, lib, warmup, deliveries }
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import inject from 'light-my-request';
import { WEBHOOK_PATH } from './bench-constants.js';
import { handlerCounter } from './scenario-ipc.js';
import { signedDelivery } from './signed-payloads.js';

const options = JSON.parse(process.env.BENCH_INSTRUCTIONS_OPTIONS ?? '{}');
const { app: kind = 'ours', adapter = 'express', warmup = 300, deliveries = 2000 } = options;
/**
 * The event ids: UUIDs (v4 form) drawn from the delivery's index, not at random, so that two runs send the
 * same bytes (the ids are keys of the store's and the anchors' Maps: other ids, other hash collisions).
 */
const eventId = (i) => {
  const h = createHash('sha256').update(`bench-event-${i}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
const signed = Array.from({ length: warmup + deliveries }, (_, i) => signedDelivery(eventId(i), options.payloadBytes));

/** A bare Node handler that reads the body and answers 200: the injection's own cost. */
function harnessHandler(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    handlerCounter.runs++;
    res.statusCode = 200;
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.end('{"received":true}');
  });
}

let send;
let close = async () => undefined;
if (kind === 'harness') {
  send = (request) => inject(harnessHandler, request);
} else if (kind === 'plain-node') {
  const handler = (await import('./plain-anchors.js')).createPlainNodeHandler();
  send = (request) => inject(handler, request);
} else if (kind === 'plain-fastify') {
  const app = await (await import('./plain-anchors.js')).createPlainFastifyApp();
  send = (request) => app.inject(request);
  close = () => app.close();
} else {
  const app =
    kind === 'baseline'
      ? await (await import('./baseline-app.js')).createBaselineApp(options)
      : (await (await import('./ours-app.js')).createOursApp(options)).app;
  await app.init();
  const instance = app.getHttpAdapter().getInstance();
  if (adapter === 'fastify') {
    await instance.ready();
    send = (request) => instance.inject(request);
  } else {
    send = (request) => inject(instance, request);
  }
  close = () => app.close();
}

/**
 * With BENCH_INSTRUMENTATION_SIGNAL set (bench/callgrind.js runs valgrind with `--instr-atstart=no`), the
 * warm-up ran uninstrumented (~5x faster, so it can be long enough for V8's tier-up to settle): say so on
 * stderr, let one turn of the event loop pass (timers due), then spin until the parent has switched
 * callgrind's instrumentation on (`callgrind_control -i on`) and created the signal file. The spin runs
 * code rather than sleeping so that valgrind polls its gdbserver without needing ptrace; it is not counted
 * (the counters are zeroed after it).
 */
async function instrumentationOn() {
  const signal = process.env.BENCH_INSTRUMENTATION_SIGNAL;
  if (!signal) return;
  await new Promise((resolve) => setImmediate(resolve));
  process.stderr.write(`${JSON.stringify({ type: 'instructions-driver-warm', sent: warmup })}\n`);
  while (!existsSync(signal));
}

async function deliver(from, to) {
  for (let i = from; i < to; i++) {
    const { body, headers } = signed[i];
    const answer = await send({ method: 'POST', url: WEBHOOK_PATH, headers, payload: body });
    if (answer.statusCode !== 200)
      throw new Error(`delivery ${i} answered ${answer.statusCode}: ${answer.payload.slice(0, 200)}`);
  }
}

// With --expose-gc (bench/callgrind.js's default flags), a full GC `settle` deliveries before the end of
// the warm-up: the window then starts at the same point of V8's GC cycle whatever the warm-up's GCs were,
// and the code that this GC deoptimised (optimised code embedding maps that died) is optimised again
// before the window.
const settle = globalThis.gc ? Math.min(2000, Math.floor(warmup / 2)) : 0;
await deliver(0, warmup - settle);
globalThis.gc?.();
await deliver(warmup - settle, warmup);
await instrumentationOn();
hostname(); // callgrind: zero the counters (--zero-before=uv_os_gethostname)
await deliver(warmup, signed.length);
homedir(); // callgrind: dump the counters (--dump-before=uv_os_homedir)
if (handlerCounter.runs !== signed.length)
  throw new Error(`the handler ran ${handlerCounter.runs} times for ${signed.length} deliveries`);
process.stderr.write(
  `${JSON.stringify({ type: 'instructions-driver', sent: signed.length, measured: deliveries, handlerRuns: handlerCounter.runs })}\n`,
);
await close();
