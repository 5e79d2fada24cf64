/**
 * Draws the scale charts (issue 22, items 4 and 5) from bench/results/scale.json (node bench/scale.bench.js),
 * with chart.js in headless Chromium (Debian's /usr/bin/chromium through playwright-core, or
 * CHROMIUM_PATH; nothing is downloaded), as bench/charts.js does. Writes:
 *   docs/bench-scale-queued.png     handled events/s with 1 and 2 worker processes, single Redis vs Cluster
 *   docs/bench-scale-instances.png  deliveries/s vs receiver processes behind the round-robin proxy
 *
 *   node bench/scale-charts.js
 */
import { readFileSync } from 'node:fs';
import { renderCharts } from './lib/render-charts.js';

const root = new URL('..', import.meta.url).pathname;
const scale = JSON.parse(readFileSync(`${root}bench/results/scale.json`, 'utf8'));
const date = scale.date.slice(0, 10);
const machine =
  `${scale.machine.cpu}, ${scale.machine.cores} cores shared by every process (load generator, proxy, Redis included), ` +
  `Node ${scale.versions.node}, ${scale.versions.loadTool}`;
const worker = (redis, count) => {
  const figures = scale.queued[redis]?.workers?.[count];
  if (!figures)
    throw new Error(`bench/results/scale.json has no queued.${redis}.workers.${count}: run bench/scale.bench.js`);
  return figures;
};
const labels = [
  'single Redis, 1 worker',
  'single Redis, 2 workers',
  'Redis Cluster, 1 worker',
  'Redis Cluster, 2 workers',
];
const cases = [
  ['redis', 1],
  ['redis', 2],
  ['cluster', 1],
  ['cluster', 2],
];
const counts = ['1', '2', '3'].filter((n) => scale.instances[n]);
const concurrency = worker('redis', 1).workerConcurrency;
const events = worker('redis', 1).events;

const charts = [
  {
    file: 'docs/bench-scale-queued.png',
    config: {
      type: 'bar',
      data: {
        labels,
        datasets: [
          {
            label: `end to end: ${events} deliveries sent to one receiver, first send -> last handled`,
            data: cases.map(([redis, n]) => worker(redis, n).handledPerS),
            backgroundColor: '#1f6feb',
          },
          {
            label: `backlog of ${events} queued jobs drained (queue resumed -> last handled)`,
            data: cases.map(([redis, n]) => worker(redis, n).drain?.handledPerS ?? null),
            backgroundColor: '#1a7f37',
          },
        ],
      },
      title: `Queued mode (BullMQ): handled events/s, worker concurrency ${concurrency} (${date})`,
      yTitle: 'handled events per second',
    },
  },
  {
    file: 'docs/bench-scale-instances.png',
    config: {
      type: 'bar',
      data: {
        labels: counts.map((n) => `${n} receiver process${n === '1' ? '' : 'es'}`),
        datasets: [
          {
            label: 'deliveries/s through the round-robin proxy (inline, RedisIdempotencyStore)',
            data: counts.map((n) => scale.instances[n].ok2xxPerS),
            backgroundColor: '#1f6feb',
          },
        ],
      },
      title: `Receiver instances behind a node:http round-robin proxy (${date})`,
      yTitle: 'deliveries per second (2xx)',
    },
  },
];

await renderCharts(charts, machine);
