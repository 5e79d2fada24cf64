#!/usr/bin/env node
/**
 * Current-state handling (issue 42) beside the default mode, against the in-process PaymentsSimulator.
 * Not part of `npm run bench` (nor `--quick`): a minute or two; loopback only.
 *
 *   npx tsc -p tsconfig.sample.json && node bench/current-state.bench.js [--intents 200] [--burst 4]
 *       [--rounds 7] [--warmup-rounds 4] [--adapter express] [--lib DIR] (default dist-sample/lib) [--out FILE]
 *       (default bench/results/current-state.json) [--max-retrieves-per-second 1000]
 *       [--reconcile-off]  (both apps with `webhooks.reconcile: false`: no retrieve budget)
 *       [--app-node-flags=FLAGS]  (the app processes' Node flags, e.g. --cpu-prof --cpu-prof-dir=DIR)
 *
 * This process runs the simulator (the service: it answers GET /payment_intents/:id) and sends the
 * deliveries; two app processes (bench/lib/current-state-app.js, the bench's receiver of lib/ours-app.js,
 * its client on the simulator) are the two modes, both warm for the whole run:
 *   default   the no-op handler as it is (`@OnPaymentEvent(type)`)
 *   current   the same handler opted in (`@OnPaymentEvent(type, { current: true })`)
 * Both with reconciliation on, as the default now is for an app with the client and the receiver, its
 * budget raised to `--max-retrieves-per-second` (the retrieve of current-state handling waits for its
 * turn in that budget: at the default 5 per second, one intent per 200 ms) and nothing due during the run
 * (afterSeconds 3600).
 * A round, per mode: `--intents` new intents made succeeded in the simulator (`sim.emit`, no endpoint: the
 * simulator delivers nothing itself), then for each intent in turn a burst of `--burst` concurrent copies
 * of its `payment_intent.succeeded` delivery (same event id: the service's duplicates), signed with the
 * bench's HMAC scheme, over keep-alive HTTP; the next burst when every answer of this one is in.
 * A copy answered 409 (it came while the first copy held the intent's exclusive claim during its GET) is
 * sent again at once when its burst has answered, as the service would redeliver it (after its retry delay).
 * Measured per round and mode: the app process's CPU (process.cpuUsage) per delivery of the burst (its
 * redeliveries' CPU included; also per request sent), each request's latency (send -> answer) and each
 * copy's (send -> its first 2xx), the GETs the simulator counted (`byRoute['GET /payment_intents/:id']`) per
 * delivery and per burst, the answers by status, and this process's CPU per delivery (the simulator and
 * the sender). Rounds alternate the modes (default, current, default, ...); ratios are medians of the
 * round-by-round ratios. After each current round, the retrieve alone: the current app's own client
 * retrieves that round's intents one at a time (app CPU and wall per retrieve; this process's CPU per GET
 * served): the retrieve's share of the current mode's added CPU and latency.
 */
import { fork } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { BENCH_SECRET, ENDPOINT_ID, EVENT_TYPE, SIGNATURE_HEADER, WEBHOOK_PATH } from './lib/bench-constants.js';
import { median, round } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    intents: { type: 'string', default: '200' },
    burst: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '7' },
    'warmup-rounds': { type: 'string', default: '4' },
    adapter: { type: 'string', default: 'express' },
    lib: { type: 'string' },
    out: { type: 'string' },
    'max-retrieves-per-second': { type: 'string', default: '1000' },
    // e.g. `--app-node-flags=--cpu-prof --cpu-prof-dir=DIR` (a profile per app process; the default app starts first)
    'app-node-flags': { type: 'string', default: '' },
    // Both apps with `webhooks.reconcile: false`: the retrieve then waits for no budget (with it, at least
    // 1 ms between two retrieves: the budget's gap is kept in whole ms).
    'reconcile-off': { type: 'boolean', default: false },
  },
});
const benchDir = new URL('.', import.meta.url).pathname;
const intents = Number(args.intents);
const burst = Number(args.burst);
const rounds = Number(args.rounds);
const libDir = args.lib
  ? new URL(`${args.lib.replace(/\/$/, '')}/`, `file://${process.cwd()}/`).href
  : new URL('../dist-sample/lib/', import.meta.url).href;
const outFile = args.out ?? `${benchDir}results/current-state.json`;
const API_KEY = 'sk_test_bench_current_state';
const GET_ROUTE = 'GET /payment_intents/:id';

const { PaymentsSimulator } = await import(`${libDir}testing/index.js`);
const sim = new PaymentsSimulator({ apiKeys: [API_KEY] });
const baseUrl = await sim.start();
const gets = () => sim.requestCounts().byRoute[GET_ROUTE] ?? 0;
const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const loadAtStart = os.loadavg();
const startedAt = new Date();

/** Starts one app process; resolves with a small RPC over its IPC channel. */
async function startApp(mode) {
  const child = fork(`${benchDir}lib/current-state-app.js`, [], {
    // The app's log lines (one per duplicate, at 'log' level) are paid for, not printed.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: args['app-node-flags'].split(' ').filter(Boolean),
    env: {
      ...process.env,
      NODE_ENV: 'production',
      BENCH_CURRENT_STATE_OPTIONS: JSON.stringify({
        adapter: args.adapter,
        lib: `${libDir}index.js`,
        baseUrl,
        apiKey: API_KEY,
        current: mode === 'current',
        reconcile: args['reconcile-off']
          ? false
          : { afterSeconds: 3600, maxRetrievesPerSecond: Number(args['max-retrieves-per-second']) },
      }),
    },
  });
  const waiters = new Map();
  child.on('message', (message) => {
    const resolve = waiters.get(message.type);
    waiters.delete(message.type);
    resolve?.(message);
  });
  const next = (type) => new Promise((resolve) => waiters.set(type, resolve));
  child.on('exit', (code) => {
    if (code !== 0 && !closing) {
      console.error(`${mode} app exited with ${code}`);
      process.exit(1);
    }
  });
  const { port } = await next('ready');
  const agent = new http.Agent({ keepAlive: true, maxSockets: burst });
  return {
    mode,
    port,
    agent,
    ask: (message, reply) => {
      const answer = next(reply);
      child.send(message);
      return answer;
    },
    close: () => {
      agent.destroy();
      child.send({ type: 'close' });
      return new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
let closing = false;

/** One signed delivery of the event `event` (the simulator's, for its intent), as the service sends it. */
function sign(event) {
  const body = JSON.stringify({
    id: event.id,
    webhook_id: ENDPOINT_ID,
    event: event.event ?? event.type,
    data: event.data,
  });
  const signature = createHmac('sha256', BENCH_SECRET).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature } };
}

function post(app, { body, headers }) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { host: '127.0.0.1', port: app.port, path: WEBHOOK_PATH, method: 'POST', headers, agent: app.agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, us: (performance.now() - t0) * 1000, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `n` new intents, each made succeeded in the simulator, and their succeeded events. */
function newIntents(n) {
  const events = [];
  for (let i = 0; i < n; i++) events.push(sim.emit(EVENT_TYPE));
  return events;
}

async function runRound(app, n) {
  const events = newIntents(n);
  const signed = events.map(sign);
  const { cpuUs: appCpu0, handlerRuns: runs0 } = await app.ask({ type: 'cpu' }, 'cpu');
  const gets0 = gets();
  const ownCpu0 = cpuUs();
  const t0 = performance.now();
  const latencies = [];
  const statuses = {};
  let maxGetsPerBurst = 0;
  const copyLatencies = [];
  let posts = 0;
  for (const delivery of signed) {
    const before = gets();
    const tBurst = performance.now();
    // The burst, then the service's redelivery of every copy not answered 2xx (409 busy: a copy that
    // came while the first held the intent's exclusive claim), at once rather than after its retry delay.
    let pending = burst;
    for (let attempt = 0; pending > 0 && attempt < 5; attempt++) {
      const answers = await Promise.all(Array.from({ length: pending }, () => post(app, delivery)));
      posts += answers.length;
      pending = 0;
      for (const a of answers) {
        latencies.push(a.us);
        const key =
          `${attempt > 0 ? 'redelivered ' : ''}${a.status} ${/"outcome":"(\w+)"|"status":"(\w+)"/.exec(a.text)?.slice(1).find(Boolean) ?? ''}`.trim();
        statuses[key] = (statuses[key] ?? 0) + 1;
        if (a.status >= 300) pending++;
        else copyLatencies.push((performance.now() - tBurst) * 1000);
      }
    }
    if (pending > 0) throw new Error(`${app.mode}: ${pending} copies still not answered 2xx after 5 attempts`);
    maxGetsPerBurst = Math.max(maxGetsPerBurst, gets() - before);
  }
  const wallUs = (performance.now() - t0) * 1000;
  const ownCpu = cpuUs() - ownCpu0;
  const roundGets = gets() - gets0;
  const { cpuUs: appCpu1, handlerRuns: runs1 } = await app.ask({ type: 'cpu' }, 'cpu');
  const deliveries = n * burst;
  return {
    mode: app.mode,
    deliveries,
    handlerRuns: runs1 - runs0,
    gets: roundGets,
    getsPerDelivery: round(roundGets / deliveries, 4),
    getsPerBurstMax: maxGetsPerBurst,
    posts,
    getsPerPost: round(roundGets / posts, 4),
    appCpuUsPerPost: round((appCpu1 - appCpu0) / posts, 2),
    appCpuUsPerDelivery: round((appCpu1 - appCpu0) / deliveries, 2),
    benchCpuUsPerDelivery: round(ownCpu / deliveries, 2),
    latencyUsMedian: round(median(latencies), 1),
    // Send -> the copy's first 2xx answer (redeliveries sent at once: no retry delay in it).
    copyLatencyUsMedian: round(median(copyLatencies), 1),
    latencyUsP90: round(latencies.sort((a, b) => a - b)[Math.floor(latencies.length * 0.9)], 1),
    wallUsPerBurst: round(wallUs / n, 1),
    statuses,
    ids: events.map((e) => e.data.payment_intent.id),
  };
}

/** The retrieve alone: the current app's client retrieves `ids` one at a time. */
async function retrieveAlone(app, ids) {
  const gets0 = gets();
  const ownCpu0 = cpuUs();
  const r = await app.ask({ type: 'retrieve', ids }, 'retrieved');
  const ownCpu = cpuUs() - ownCpu0;
  return {
    n: r.n,
    gets: gets() - gets0,
    appCpuUsPerRetrieve: round(r.cpuUs / r.n, 2),
    wallUsPerRetrieve: round(r.wallUs / r.n, 1),
    simulatorCpuUsPerGet: round(ownCpu / r.n, 2),
  };
}

const apps = { default: await startApp('default'), current: await startApp('current') };
// Warm-up: uncounted rounds of each (JIT, sockets, the simulator's routes): CPU per delivery still fell
// over the first ~4 rounds of 300 intents after a warm-up of 100.
for (let r = 0; r < Number(args['warmup-rounds']); r++)
  for (const app of Object.values(apps)) {
    await runRound(app, intents);
    await retrieveAlone(app, (await runRound(app, 10)).ids);
  }
const perRound = [];
for (let r = 0; r < rounds; r++) {
  const d = await runRound(apps.default, intents);
  const c = await runRound(apps.current, intents);
  const retrieve = await retrieveAlone(apps.current, c.ids);
  delete d.ids;
  delete c.ids;
  perRound.push({ default: d, current: c, retrieve });
  console.error(
    `round ${r + 1}/${rounds}: app CPU/delivery default ${d.appCpuUsPerDelivery} µs, current ${c.appCpuUsPerDelivery} µs; ` +
      `latency median ${d.latencyUsMedian} / ${c.latencyUsMedian} µs; GETs/delivery ${c.getsPerDelivery} (max ${c.getsPerBurstMax} per burst); ` +
      `retrieve alone ${retrieve.appCpuUsPerRetrieve} µs app CPU, ${retrieve.wallUsPerRetrieve} µs wall; ${JSON.stringify(c.statuses)}`,
  );
}
closing = true;
await Promise.all(Object.values(apps).map((app) => app.close()));
await sim.stop();

const med = (f) => round(median(perRound.map(f)), 3);
const summary = {
  getsPerDelivery: med((x) => x.current.getsPerDelivery),
  getsPerBurstMax: Math.max(...perRound.map((x) => x.current.getsPerBurstMax)),
  getsPerDeliveryDefault: med((x) => x.default.getsPerDelivery),
  appCpuUsPerDelivery: {
    default: med((x) => x.default.appCpuUsPerDelivery),
    current: med((x) => x.current.appCpuUsPerDelivery),
  },
  cpuPerDeliveryVsDefault: med((x) => x.current.appCpuUsPerDelivery / x.default.appCpuUsPerDelivery),
  addedCpuUsPerDelivery: med((x) => x.current.appCpuUsPerDelivery - x.default.appCpuUsPerDelivery),
  latencyUsMedian: { default: med((x) => x.default.latencyUsMedian), current: med((x) => x.current.latencyUsMedian) },
  copyLatencyUsMedian: {
    default: med((x) => x.default.copyLatencyUsMedian),
    current: med((x) => x.current.copyLatencyUsMedian),
  },
  addedCopyLatencyUsMedian: med((x) => x.current.copyLatencyUsMedian - x.default.copyLatencyUsMedian),
  appCpuUsPerPost: { default: med((x) => x.default.appCpuUsPerPost), current: med((x) => x.current.appCpuUsPerPost) },
  postsPerDelivery: {
    default: med((x) => x.default.posts / x.default.deliveries),
    current: med((x) => x.current.posts / x.current.deliveries),
  },
  latencyVsDefault: med((x) => x.current.latencyUsMedian / x.default.latencyUsMedian),
  addedLatencyUsMedian: med((x) => x.current.latencyUsMedian - x.default.latencyUsMedian),
  retrieve: {
    appCpuUsPerRetrieve: med((x) => x.retrieve.appCpuUsPerRetrieve),
    wallUsPerRetrieve: med((x) => x.retrieve.wallUsPerRetrieve),
    simulatorCpuUsPerGet: med((x) => x.retrieve.simulatorCpuUsPerGet),
    // The retrieve's app CPU per delivery (GETs per delivery x its CPU), over the CPU current mode adds.
    appCpuUsPerDelivery: med((x) => x.current.getsPerDelivery * x.retrieve.appCpuUsPerRetrieve),
    shareOfAddedCpu: med(
      (x) =>
        (x.current.getsPerDelivery * x.retrieve.appCpuUsPerRetrieve) /
        (x.current.appCpuUsPerDelivery - x.default.appCpuUsPerDelivery),
    ),
  },
  benchProcessCpuUsPerDelivery: {
    default: med((x) => x.default.benchCpuUsPerDelivery),
    current: med((x) => x.current.benchCpuUsPerDelivery),
  },
};
const result = {
  date: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    loadAverageAtStart: loadAtStart.map((x) => round(x, 2)),
    loadAverageAtEnd: os.loadavg().map((x) => round(x, 2)),
  },
  config: {
    intents,
    burst,
    rounds,
    warmupRounds: Number(args['warmup-rounds']),
    adapter: args.adapter,
    lib: args.lib ?? 'dist-sample/lib',
    maxRetrievesPerSecond: args['reconcile-off'] ? null : Number(args['max-retrieves-per-second']),
    reconcile: !args['reconcile-off'],
  },
  summary,
  perRound,
};
mkdirSync(new URL('.', `file://${outFile}`).pathname, { recursive: true });
writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(summary, null, 2));
