#!/usr/bin/env node
/**
 * What one delivery costs on the Redis Cluster, ours against the hand-written claim (issue 31's Cluster
 * anchor): commands and round trips to Redis, Redis' own time per command (INFO commandstats), and the
 * wall and CPU time of the receiver's process, one delivery at a time over HTTP (keep-alive, one socket).
 * A private 3-master Cluster (--ports, default 7231-7233), every variant in a child process of its own
 * per round, rounds interleaved, medians reported.
 *
 *   node bench/cluster-commands.bench.js [--deliveries 2000] [--rounds 3] [--variants ours=dist-sample/lib,hand]
 *     ours=<lib dir>   PaymentsModule + RedisIdempotencyStore on that compiled lib (bench/lib/ours-app.js)
 *     hand             bench/lib/hand-claim.js behind the `@Res()` bare route (bench/lib/baseline-app.js)
 * A variant may be named: `before:ours=dist-base/lib`. The last variant is the anchor: the others' ratios
 * to it are taken within each round (paired), then their median. The receiver's CPU includes the HTTP client of the
 * same process (the same for every variant). A round trip counts a command sent while none was waiting.
 */
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    deliveries: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    variants: { type: 'string', default: 'ours=dist-sample/lib,hand' },
    ports: { type: 'string', default: '7231,7232,7233' },
    child: { type: 'string' },
  },
});

if (args.child) await child(args.child, Number(args.deliveries));
else await parent();

async function parent() {
  const { loadavg } = await import('node:os');
  const { startCluster } = await import('./lib/private-redis.js');
  const { median, round } = await import('./lib/stats.js');
  const variants = args.variants.split(',').map((spec) => {
    const [name, def] = spec.includes(':') ? spec.split(':') : [spec.split('=')[0], spec];
    return { name, def };
  });
  const cluster = await startCluster({ ports: args.ports.split(',').map(Number) });
  const results = new Map(variants.map((v) => [v.name, []]));
  try {
    for (let r = 0; r < Number(args.rounds); r++) {
      for (let i = 0; i < variants.length; i++) {
        const v = variants[(i + r) % variants.length];
        const line = await new Promise((resolve, reject) => {
          const proc = fork(new URL(import.meta.url).pathname, ['--child', v.def, '--deliveries', args.deliveries], {
            env: { ...process.env, REDIS_CLUSTER_NODES: cluster.nodes },
            stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
          });
          let out = '';
          proc.stdout.on('data', (chunk) => (out += chunk));
          proc.on('exit', (code) =>
            code === 0
              ? resolve(out.split('\n').find((l) => l.startsWith('{')))
              : reject(new Error(`${v.name}: exit ${code}`)),
          );
        });
        const result = JSON.parse(line);
        results.get(v.name).push(result);
        console.log(
          `round ${r + 1} ${v.name.padEnd(10)} round trips ${result.roundTrips}  commands ${result.commands}  ` +
            `redis µs ${result.redisUs}  wall ${result.wallUs} µs  cpu ${result.cpuUs} µs  (load ${loadavg()[0].toFixed(1)})`,
        );
      }
    }
  } finally {
    await cluster.stop();
  }
  const summary = {};
  for (const [name, runs] of results) {
    summary[name] = Object.fromEntries(
      ['roundTrips', 'commands', 'redisUs', 'wallUs', 'cpuUs'].map((k) => [k, round(median(runs.map((x) => x[k])), 1)]),
    );
    summary[name].perCommand = runs.at(-1).perCommand;
  }
  // Paired: each variant over the last one (the anchor) within each round, then the median of those.
  const anchor = variants.at(-1).name;
  for (const { name } of variants.slice(0, -1)) {
    for (const k of ['wallUs', 'cpuUs', 'redisUs']) {
      const paired = results.get(name).map((x, r) => x[k] / results.get(anchor)[r][k]);
      summary[name][`${k}Over${anchor}`] = round(median(paired), 3);
    }
  }
  console.log(JSON.stringify({ deliveries: Number(args.deliveries), rounds: Number(args.rounds), summary }, null, 2));
}

async function child(def, deliveries) {
  const { request, Agent } = await import('node:http');
  const { Redis } = await import('ioredis');
  const { signedDelivery } = await import('./lib/signed-payloads.js');
  const { WEBHOOK_PATH } = await import('./lib/bench-constants.js');
  const ports = process.env.REDIS_CLUSTER_NODES.split(',').map((n) => Number(n.split(':')[1]));
  let inflight = 0;
  let roundTrips = 0;
  let commands = 0;
  let counting = false;
  const sendCommand = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (command, stream) {
    if (counting) {
      if (inflight++ === 0) roundTrips++;
      commands++;
      const answered = () => void inflight--;
      command.promise.then(answered, answered);
    }
    return sendCommand.call(this, command, stream);
  };
  let app;
  let cleanups = [];
  if (def === 'hand') {
    const { createBaselineApp } = await import('./lib/baseline-app.js');
    app = await createBaselineApp({ adapter: 'express', reply: 'res', claim: 'cluster', logger: ['error'] });
  } else {
    const { createOursApp } = await import('./lib/ours-app.js');
    const lib = new URL(`${def.slice('ours='.length).replace(/\/$/, '')}/index.js`, `file://${process.cwd()}/`).href;
    ({ app, cleanups } = await createOursApp({ adapter: 'express', store: 'redis-cluster', lib, logger: ['error'] }));
  }
  await app.listen(0, '127.0.0.1');
  const port = app.getHttpServer().address().port;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = (d) =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: WEBHOOK_PATH, method: 'POST', headers: d.headers, agent },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(d.body);
    });
  const nodes = ports.map((p) => new Redis({ port: p, host: '127.0.0.1' }));
  const stats = async () => {
    const out = {};
    for (const node of nodes) {
      for (const m of (await node.info('commandstats')).matchAll(/cmdstat_(\w+):calls=(\d+),usec=(\d+)/g)) {
        out[m[1]] ??= { calls: 0, usec: 0 };
        out[m[1]].calls += Number(m[2]);
        out[m[1]].usec += Number(m[3]);
      }
    }
    return out;
  };
  const warmup = 500;
  const pool = Array.from({ length: deliveries + warmup }, () => signedDelivery());
  for (let i = 0; i < warmup; i++) await post(pool[i]);
  const before = await stats();
  counting = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = warmup; i < pool.length; i++) await post(pool[i]);
  const wallUs = ((performance.now() - t0) * 1000) / deliveries;
  const cpu = process.cpuUsage(cpu0);
  counting = false;
  const after = await stats();
  let redisUs = 0;
  const perCommand = {};
  for (const [name, s] of Object.entries(after)) {
    const calls = s.calls - (before[name]?.calls ?? 0);
    if (name === 'info' || calls === 0) continue;
    const usec = s.usec - (before[name]?.usec ?? 0);
    // EVALSHA's time includes the commands its script calls: only top-level commands are summed.
    if (name === 'evalsha' || name === 'eval') redisUs += usec;
    perCommand[name] = +(calls / deliveries).toFixed(2);
  }
  console.log(
    JSON.stringify({
      roundTrips: roundTrips / deliveries,
      commands: commands / deliveries,
      redisUs: +(redisUs / deliveries).toFixed(1),
      wallUs: +wallUs.toFixed(1),
      cpuUs: +((cpu.user + cpu.system) / deliveries).toFixed(1),
      perCommand,
    }),
  );
  await app.close();
  for (const cleanup of cleanups) await cleanup();
  for (const node of nodes) node.disconnect();
  agent.destroy();
  process.exit(0);
}
