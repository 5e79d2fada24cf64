#!/usr/bin/env node
/**
 * Receiving outside a Nest route (issue 43), each beside its hand-written anchor; one run, interleaved
 * rounds, medians (the machine is shared: figures of one run only).
 *
 *   RabbitMQ consumer: deliveries per second draining `--count` pre-published signed deliveries (1 KB,
 *   fresh event ids, persistent) with the same prefetch: ours (Nest's RMQ transport through
 *   createPaymentsRabbitMqServer + PaymentsRabbitMqModule, the receiver, memory store, a no-op handler,
 *   manual ack) against a hand-written amqplib consumer (the same HMAC in constant time, JSON.parse, a
 *   Map of ids, the ack); CPU per delivery of the consumer's process (process.cpuUsage). Each consumer
 *   is a fresh process per round, its own queue (deleted after), the broker at AMQP_URL.
 *   Cold start: fresh processes, from the process's start to the first verified delivery handled: ours
 *   (createPaymentsWebhookHandler over PaymentsModule) against a bare Nest application context doing
 *   the same by hand; also the import alone and the heap after a full GC.
 *
 *   npx tsc -p tsconfig.sample.json && node bench/receive.bench.js [--rounds 5] [--count 5000] [--prefetch 32]
 *                                    [--cold-rounds 9] [--only rabbitmq,cold] [--lib dist-sample/lib] [--out FILE]
 * Writes bench/results/receive.json; run.js copies its two ratios into latest.json
 * (ratios.brokerConsumerVsHandWritten, ratios.coldStartVsBareContext).
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';
import { signedDelivery } from './lib/signed-payloads.js';
import { median, ratio, round } from './lib/stats.js';

const benchDir = new URL('.', import.meta.url).pathname;
const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    count: { type: 'string', default: '5000' },
    prefetch: { type: 'string', default: '32' },
    'cold-rounds': { type: 'string', default: '9' },
    only: { type: 'string', default: 'rabbitmq,cold' },
    lib: { type: 'string', default: 'dist-sample/lib' },
    out: { type: 'string', default: `${benchDir}results/receive.json` },
  },
});
const only = new Set(args.only.split(','));
const lib = new URL(`${args.lib.replace(/\/$/, '')}/index.js`, `file://${process.cwd()}/`).href;
const url = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const rounds = Number(args.rounds);
const count = Number(args.count);
const prefetch = Number(args.prefetch);
const started = Date.now();

/** Runs a child to its 'done' message. */
function runChild(file, env) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(file, import.meta.url), [], {
      env: { ...process.env, NODE_ENV: 'production', ...env },
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    let result;
    child.on('message', (message) => {
      if (message?.type === 'done') result = message;
    });
    child.on('exit', (code) => (result ? resolve(result) : reject(new Error(`${file} exited with ${code}`))));
  });
}

/** A fresh queue with the consumer's topology, filled with `count` signed deliveries (confirmed). */
async function filledQueue(channel) {
  const queue = `nestjs-payments-bench-${process.pid}-${randomUUID().slice(0, 8)}`;
  await channel.assertQueue(`${queue}.retry`, {
    durable: true,
    arguments: { 'x-message-ttl': 30_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue },
  });
  await channel.assertQueue(`${queue}.dead`, { durable: true });
  await channel.assertQueue(queue, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${queue}.retry` },
  });
  for (let i = 0; i < count; i += 1) {
    const { body, headers } = signedDelivery();
    channel.sendToQueue(queue, Buffer.from(body), { headers, persistent: true, contentType: 'application/json' });
  }
  await channel.waitForConfirms();
  return queue;
}

async function benchRabbitMq() {
  const connection = await amqp.connect(url);
  const channel = await connection.createConfirmChannel();
  const runs = { ours: [], hand: [] };
  for (let r = 0; r < rounds; r += 1) {
    const order = r % 2 === 0 ? ['ours', 'hand'] : ['hand', 'ours'];
    for (const kind of order) {
      const queue = await filledQueue(channel);
      const load = loadavg()[0];
      const result = await runChild('./receive/rabbitmq-consumer.child.js', {
        BENCH_CONSUMER: JSON.stringify({ kind, url, queue, count, prefetch, lib }),
      });
      const left = (await channel.checkQueue(queue)).messageCount;
      for (const name of [queue, `${queue}.retry`, `${queue}.dead`]) await channel.deleteQueue(name);
      if (left !== 0) throw new Error(`${kind}: ${left} message(s) left in the queue`);
      runs[kind].push({
        deliveriesPerSecond: round(count / (result.elapsedMs / 1000), 0),
        cpuUsPerDelivery: round(result.cpuUs / count, 1),
        elapsedMs: round(result.elapsedMs, 0),
        load: round(load, 2),
      });
      console.log(
        `  rabbitmq ${kind.padEnd(5)} round ${r + 1}: ${runs[kind].at(-1).deliveriesPerSecond} deliveries/s, ${runs[kind].at(-1).cpuUsPerDelivery} µs CPU each`,
      );
    }
  }
  await connection.close();
  const summary = (kind) => ({
    deliveriesPerSecond: median(runs[kind].map((r) => r.deliveriesPerSecond)),
    cpuUsPerDelivery: median(runs[kind].map((r) => r.cpuUsPerDelivery)),
    perRound: runs[kind],
  });
  const ours = summary('ours');
  const hand = summary('hand');
  return {
    config: { count, prefetch, rounds, payloadBytes: 1024, persistent: true },
    ours,
    hand,
    ratios: {
      deliveriesPerSecond: ratio(ours.deliveriesPerSecond, hand.deliveriesPerSecond),
      cpuPerDelivery: ratio(ours.cpuUsPerDelivery, hand.cpuUsPerDelivery),
    },
  };
}

async function benchColdStart() {
  const coldRounds = Number(args['cold-rounds']);
  const runs = { ours: [], bare: [] };
  for (let r = 0; r < coldRounds; r += 1) {
    const order = r % 2 === 0 ? ['ours', 'bare'] : ['bare', 'ours'];
    for (const kind of order) {
      const result = await runChild('./receive/cold-start.child.js', { BENCH_COLD: JSON.stringify({ kind, lib }) });
      runs[kind].push({
        coldMs: round(result.coldMs, 1),
        sinceImportsMs: round(result.sinceImportsMs, 1),
        importMs: round(result.importMs, 1),
        heapMB: round(result.heapMB, 2),
      });
    }
    console.log(`  cold start round ${r + 1}: ours ${runs.ours.at(-1).coldMs} ms, bare ${runs.bare.at(-1).coldMs} ms`);
  }
  const summary = (kind) => ({
    coldMs: median(runs[kind].map((r) => r.coldMs)),
    sinceImportsMs: median(runs[kind].map((r) => r.sinceImportsMs)),
    importMs: median(runs[kind].map((r) => r.importMs)),
    heapMB: median(runs[kind].map((r) => r.heapMB)),
    perRound: runs[kind],
  });
  const ours = summary('ours');
  const bare = summary('bare');
  return {
    config: { rounds: coldRounds },
    ours,
    bare,
    ratios: {
      coldStart: ratio(ours.coldMs, bare.coldMs),
      sinceImports: ratio(ours.sinceImportsMs, bare.sinceImportsMs),
      import: ratio(ours.importMs, bare.importMs),
      heap: ratio(ours.heapMB, bare.heapMB),
    },
  };
}

const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version, loadAtStart: round(loadavg()[0], 2) },
};
if (only.has('rabbitmq')) {
  console.log(`RabbitMQ consumer: ${rounds} rounds of ${count} deliveries, prefetch ${prefetch}`);
  results.rabbitmq = await benchRabbitMq();
}
if (only.has('cold')) {
  console.log('Cold start of a function instance');
  results.coldStart = await benchColdStart();
}
results.ratios = {
  brokerConsumerVsHandWritten: results.rabbitmq?.ratios.deliveriesPerSecond ?? null,
  coldStartVsBareContext: results.coldStart?.ratios.coldStart ?? null,
};
results.durationS = round((Date.now() - started) / 1000, 0);
writeFileSync(args.out, `${JSON.stringify(results, null, 2)}\n`);
console.log(JSON.stringify(results.ratios), `written to ${args.out}`);
