/**
 * The `reconcile.*` keys of results/latest.json, from the last `node bench/reconcile.bench.js`
 * (results/reconcile.json), if any:
 *   reconcile.sweepIntentsPerSecond    checks/s at the defaults (5 retrieves/s), the lowest of every store and size
 *   reconcile.firstCheckP99Seconds1M   p99 first-check latency of a new intent behind the largest backlog measured
 *                                      (1M unless the run was cut), the highest of the stores
 *   reconcile.bytesPerWatchedIntent    { memory, redis, postgres } at the largest backlog measured
 *   reconcile.ceilingIntentsPerSecond  { memory, redis, postgres }: checks/s at 1000 retrieves/s, 32 in flight
 *   reconcile.measuredAt, reconcile.largestBacklog
 */
import { existsSync, readFileSync } from 'node:fs';

export function reconcileSummary(file) {
  if (!existsSync(file)) return undefined;
  const run = JSON.parse(readFileSync(file, 'utf8'));
  const stores = Object.entries(run.stores);
  const largest = Math.max(...stores.flatMap(([, sizes]) => Object.keys(sizes).map(Number)));
  const atLargest = (pick) =>
    Object.fromEntries(
      stores.filter(([, sizes]) => sizes[largest]).map(([kind, sizes]) => [kind, pick(sizes[largest])]),
    );
  const all = stores.flatMap(([, sizes]) => Object.values(sizes));
  return {
    measuredAt: run.date,
    largestBacklog: largest,
    sweepIntentsPerSecond: Math.min(...all.map((f) => f.defaults.checksPerS)),
    firstCheckP99Seconds1M: Math.max(...Object.values(atLargest((f) => f.defaults.firstCheckP99S))),
    bytesPerWatchedIntent: atLargest((f) => f.bytesPerWatchedIntent),
    ceilingIntentsPerSecond: atLargest((f) => f.ceiling.checksPerS),
  };
}

/** Sets `results.reconcile` from results/reconcile.json (kept as it was when there is none). */
export function mergeReconcile(results, benchDir) {
  const summary = reconcileSummary(`${benchDir}results/reconcile.json`);
  if (summary) results.reconcile = summary;
}
