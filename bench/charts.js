/**
 * Draws the growth charts of docs/benchmarks.md (issue 22, item 5) from the figures of one run:
 *   bench/results/growth.json        (node bench/callgrind.js --growth: instructions per delivery)
 *   bench/results/memory-growth.json (node --expose-gc bench/memory.bench.js --growth > that file)
 * with chart.js in headless Chromium (Debian's /usr/bin/chromium through playwright-core, or
 * CHROMIUM_PATH; nothing is downloaded). Writes docs/bench-growth-handlers.png,
 * docs/bench-growth-payload.png and docs/bench-growth-memory.png.
 *
 *   node bench/charts.js
 */
import { readFileSync } from 'node:fs';
import { renderCharts } from './lib/render-charts.js';

const root = new URL('..', import.meta.url).pathname;
const read = (path) => JSON.parse(readFileSync(`${root}${path}`, 'utf8'));
const growth = read('bench/results/growth.json');
const memory = read('bench/results/memory-growth.json');
const per = (id) => {
  const value = growth.cases[id]?.instructionsPerDelivery;
  if (value === undefined)
    throw new Error(`bench/results/growth.json has no case ${id}: run bench/callgrind.js --growth`);
  return value;
};
const date = growth.date.slice(0, 10);
const machine = `${growth.machine.cpu}, ${growth.machine.cores} cores, Node ${growth.versions.node}`;

const charts = [
  {
    file: 'docs/bench-growth-handlers.png',
    config: {
      type: 'bar',
      data: {
        labels: ['1 event type, 1 handler', '10 event types', '100 event types', '10 handlers on the delivered event'],
        datasets: [
          {
            label: 'ours (Nest + Fastify), instructions per delivery',
            data: [per('ours-fastify'), per('growth-types-10'), per('growth-types-100'), per('growth-handlers-10')],
            backgroundColor: '#1f6feb',
          },
          {
            label: 'plain Fastify route (the limit)',
            data: [per('plain-fastify'), null, null, null],
            backgroundColor: '#8c959f',
          },
        ],
      },
      title: `Cost per delivery vs handlers (callgrind, ${date})`,
      yTitle: 'instructions per delivery',
    },
  },
  {
    file: 'docs/bench-growth-payload.png',
    config: {
      type: 'line',
      data: {
        datasets: [
          {
            label: 'ours (Nest + Fastify)',
            data: [
              { x: 1024, y: per('ours-fastify') },
              { x: 64_000, y: per('growth-payload-64k') },
              { x: 1_000_000, y: per('growth-payload-1m') },
            ],
            borderColor: '#1f6feb',
            backgroundColor: '#1f6feb',
          },
          {
            label: 'plain Fastify route (the limit)',
            data: [
              { x: 1024, y: per('plain-fastify') },
              { x: 64_000, y: per('growth-plain-fastify-64k') },
              { x: 1_000_000, y: per('growth-plain-fastify-1m') },
            ],
            borderColor: '#8c959f',
            backgroundColor: '#8c959f',
          },
        ],
      },
      title: `Cost per delivery vs payload size (callgrind, ${date}; log scales)`,
      yTitle: 'instructions per delivery',
      xTitle: 'payload bytes',
      logY: true,
      logX: true,
    },
  },
  {
    file: 'docs/bench-growth-memory.png',
    config: {
      type: 'line',
      data: {
        datasets: [
          {
            label: 'MemoryIdempotencyStore, heap retained (MB)',
            data: memory.retainedGrowth.map((p) => ({ x: p.events, y: p.heapMB })),
            borderColor: '#1a7f37',
            backgroundColor: '#1a7f37',
          },
        ],
      },
      title: `Memory vs retained event ids (${date}; log scales)`,
      yTitle: 'MB (heap after full GC)',
      xTitle: 'completed (event, handler) ids held',
      logY: true,
      logX: true,
    },
  },
];

await renderCharts(charts, machine);
