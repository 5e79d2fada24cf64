/**
 * Draws the reconciliation charts (issue 31, item 4) from bench/results/reconcile.json
 * (node --expose-gc bench/reconcile.bench.js), as bench/scale-charts.js does. Writes:
 *   docs/bench-reconcile-ceiling.png      checks/s each store sustains (1000 retrieves/s allowed, 32 in flight)
 *   docs/bench-reconcile-first-check.png  p99 first-check latency of a new intent at the defaults
 *   docs/bench-reconcile-bytes.png        bytes per watched intent
 *
 *   node bench/reconcile-charts.js
 */
import { readFileSync } from 'node:fs';
import { renderCharts } from './lib/render-charts.js';

const root = new URL('..', import.meta.url).pathname;
const run = JSON.parse(readFileSync(`${root}bench/results/reconcile.json`, 'utf8'));
const date = run.date.slice(0, 10);
const load = `load ${run.machine.loadAverageAtStart[0]}-${run.machine.loadAverageAtEnd[0]}`;
const machine = `${run.machine.cpu}, ${run.machine.cores} cores shared with other jobs (${load}), Node ${run.versions.node}; in-process client stub`;
const stores = Object.keys(run.stores);
const sizes = [...new Set(stores.flatMap((kind) => Object.keys(run.stores[kind])))].map(Number).sort((a, b) => a - b);
const label = (size) => (size >= 1e6 ? `${size / 1e6}M` : `${size / 1e3}k`) + ' watched intents';
const colours = { memory: '#8250df', redis: '#cf222e', postgres: '#1f6feb' };
const datasets = (pick) =>
  stores.map((kind) => ({
    label: kind,
    data: sizes.map((size) => (run.stores[kind][size] ? pick(run.stores[kind][size]) : null)),
    backgroundColor: colours[kind],
  }));

await renderCharts(
  [
    {
      file: 'docs/bench-reconcile-ceiling.png',
      config: {
        type: 'bar',
        data: { labels: sizes.map(label), datasets: datasets((f) => f.ceiling.checksPerS) },
        title: `Sweep throughput behind a backlog, 1000 retrieves/s allowed, 32 in flight (${date})`,
        yTitle: 'intents checked per second',
      },
    },
    {
      file: 'docs/bench-reconcile-first-check.png',
      config: {
        type: 'bar',
        data: { labels: sizes.map(label), datasets: datasets((f) => f.defaults.firstCheckP99S) },
        title: `First check of a new intent behind the backlog, p99, defaults: 5/s, batch 100 (${date})`,
        yTitle: 'seconds from due to first retrieve',
      },
    },
    {
      file: 'docs/bench-reconcile-bytes.png',
      config: {
        type: 'bar',
        data: { labels: sizes.map(label), datasets: datasets((f) => f.bytesPerWatchedIntent) },
        title: `Store size per watched intent (${date})`,
        yTitle: 'bytes per watched intent',
      },
    },
  ],
  machine,
);
