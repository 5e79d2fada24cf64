/**
 * The issue-43 keys of results/latest.json, from the last `node bench/receive.bench.js`
 * (results/receive.json), if any:
 *   ratios.brokerConsumerVsHandWritten   deliveries/s of our RabbitMQ consumer over a hand-written amqplib one (same prefetch)
 *   ratios.coldStartVsBareContext        a function instance's cold start (import, context, first verified delivery handled),
 *                                        ours over a bare Nest application context doing the same by hand
 *   receive                              the medians behind them (CPU per delivery, import time, heap), with the run's date
 */
import { existsSync, readFileSync } from 'node:fs';

/** Sets `results.receive` and the two ratios from results/receive.json (kept as they were when there is none). */
export function mergeReceive(results, benchDir) {
  const file = `${benchDir}results/receive.json`;
  if (!existsSync(file)) return;
  const run = JSON.parse(readFileSync(file, 'utf8'));
  results.ratios ??= {};
  results.ratios.brokerConsumerVsHandWritten = run.ratios.brokerConsumerVsHandWritten;
  results.ratios.coldStartVsBareContext = run.ratios.coldStartVsBareContext;
  const strip = (summary) =>
    summary && Object.fromEntries(Object.entries(summary).filter(([key]) => key !== 'perRound'));
  results.receive = {
    measuredAt: run.date,
    rabbitmq: run.rabbitmq && {
      config: run.rabbitmq.config,
      ours: strip(run.rabbitmq.ours),
      hand: strip(run.rabbitmq.hand),
      ratios: run.rabbitmq.ratios,
    },
    coldStart: run.coldStart && {
      ours: strip(run.coldStart.ours),
      bare: strip(run.coldStart.bare),
      ratios: run.coldStart.ratios,
    },
  };
}
