/**
 * The process that bench/callgrind.js runs under `valgrind --tool=callgrind`: builds one app (ours,
 * the bare baseline route, or the harness alone), then sends it `warmup + deliveries` signed deliveries
 * one after another, in process, through light-my-request (no socket, no other process: what is counted
 * is this app's work plus the small, fixed cost of the injection, which the `harness` case measures).
 * Every delivery must answer 200 and run the handler once. All deliveries are signed before the first
 * is sent. The measured deliveries are marked for callgrind by two native calls that nothing else
 * makes here: `os.hostname()` (uv_os_gethostname: callgrind zeroes its counters) just before them and
 * `os.homedir()` (uv_os_homedir: callgrind dumps) just after, so the dump holds the deliveries alone.
 * Options: BENCH_INSTRUCTIONS_OPTIONS (JSON)
 *   { app: 'ours' | 'baseline' | 'harness' | 'plain-node' | 'plain-fastify', adapter, logger, logDeliveries, lib, warmup, deliveries }
 */
import { homedir, hostname } from 'node:os';
import inject from 'light-my-request';
import { WEBHOOK_PATH } from './bench-constants.js';
import { handlerCounter } from './scenario-ipc.js';
import { signedDelivery } from './signed-payloads.js';

const options = JSON.parse(process.env.BENCH_INSTRUCTIONS_OPTIONS ?? '{}');
const { app: kind = 'ours', adapter = 'express', warmup = 300, deliveries = 2000 } = options;
const signed = Array.from({ length: warmup + deliveries }, () => signedDelivery(undefined, options.payloadBytes));

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

async function deliver(from, to) {
  for (let i = from; i < to; i++) {
    const { body, headers } = signed[i];
    const answer = await send({ method: 'POST', url: WEBHOOK_PATH, headers, payload: body });
    if (answer.statusCode !== 200)
      throw new Error(`delivery ${i} answered ${answer.statusCode}: ${answer.payload.slice(0, 200)}`);
  }
}

await deliver(0, warmup);
hostname(); // callgrind: zero the counters (--zero-before=uv_os_gethostname)
await deliver(warmup, signed.length);
homedir(); // callgrind: dump the counters (--dump-before=uv_os_homedir)
if (handlerCounter.runs !== signed.length)
  throw new Error(`the handler ran ${handlerCounter.runs} times for ${signed.length} deliveries`);
process.stderr.write(
  `${JSON.stringify({ type: 'instructions-driver', sent: signed.length, measured: deliveries, handlerRuns: handlerCounter.runs })}\n`,
);
await close();
