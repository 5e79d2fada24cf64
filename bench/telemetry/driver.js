/**
 * The process bench/telemetry/overhead.js runs (preloaded with otel-mode.mjs): builds our app
 * (bench/lib/ours-app.js), sends `warmup + deliveries` pre-signed deliveries one after another in
 * process (light-my-request / Fastify inject: no socket), and prints the CPU time (user + system) of
 * the measured deliveries. The measured part is also marked for callgrind, as bench/lib/instructions-driver.js
 * does: `os.hostname()` before (zero the counters), `os.homedir()` after (dump them).
 * Options: BENCH_TELEMETRY_OPTIONS (JSON) { adapter, lib, warmup, deliveries }
 */
import { homedir, hostname } from 'node:os';
import inject from 'light-my-request';
import { WEBHOOK_PATH } from '../lib/bench-constants.js';
import { createOursApp } from '../lib/ours-app.js';
import { handlerCounter } from '../lib/scenario-ipc.js';
import { signedDelivery } from '../lib/signed-payloads.js';

const options = JSON.parse(process.env.BENCH_TELEMETRY_OPTIONS ?? '{}');
const { adapter = 'express', warmup = 500, deliveries = 3000 } = options;
const signed = Array.from({ length: warmup + deliveries }, () => signedDelivery());

const { app } = await createOursApp(options);
await app.init();
const instance = app.getHttpAdapter().getInstance();
let send;
if (adapter === 'fastify') {
  await instance.ready();
  send = (request) => instance.inject(request);
} else {
  send = (request) => inject(instance, request);
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
const before = process.cpuUsage();
await deliver(warmup, signed.length);
const used = process.cpuUsage(before);
homedir(); // callgrind: dump the counters (--dump-before=uv_os_homedir)
if (handlerCounter.runs !== signed.length)
  throw new Error(`the handler ran ${handlerCounter.runs} times for ${signed.length} deliveries`);
process.stderr.write(
  `${JSON.stringify({ type: 'telemetry-driver', measured: deliveries, cpuMicros: used.user + used.system })}\n`,
);
await app.close();
