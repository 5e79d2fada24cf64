/**
 * Issue 42 (current-state handling; reconciliation on by default): its figures in results/latest.json,
 * each beside its anchor of the same run, from the runs of record of the issue (each file as its run
 * wrote it; a missing one leaves its figures out):
 *   results/instructions-issue42.json  node bench/callgrind.js: the inline memory path (default mode, no
 *                                      opt-in), ours at its defaults (`ours-*`), ours with reconciliation off
 *                                      (`ours-*-reconcile-off`) and the build before the merge (`ours-*-before`)
 *   results/current-state.json         node bench/current-state.bench.js: current-state mode beside the default
 * Keys set here:
 *   currentState   getsPerDelivery, cpuPerDeliveryVsDefault, latency, the retrieve's share (see below)
 *   issue42        every figure, its anchor, and whether the issue's target is met
 */
import { existsSync, readFileSync } from 'node:fs';

const read = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined);
const r4 = (value) => (Number.isFinite(value) ? Math.round(value * 10000) / 10000 : null);

/** Sets `currentState` and `issue42` of `results` from the files above (kept as they were when there are none). */
export function mergeIssue42(results, benchDir) {
  const dir = `${benchDir}results/`;
  const counted = read(`${dir}instructions-issue42.json`);
  const cs = read(`${dir}current-state.json`);
  if (!counted && !cs) return;
  const issue = { sources: {}, figures: {}, targets: [] };
  if (counted) {
    const c = (id) => counted.cases?.[id];
    issue.sources.instructions = {
      file: 'results/instructions-issue42.json',
      date: counted.date,
      config: counted.config,
    };
    issue.figures.instructions = Object.fromEntries(
      ['express', 'fastify'].map((adapter) => {
        const ours = c(`ours-${adapter}`)?.instructionsPerDelivery ?? null;
        const off = c(`ours-${adapter}-reconcile-off`)?.instructionsPerDelivery ?? null;
        const before = c(`ours-${adapter}-before`)?.instructionsPerDelivery ?? null;
        return [
          adapter,
          {
            oursDefaults: ours,
            oursReconcileOff: off,
            before,
            likeForLikeRatio: off === null || before === null ? null : r4(off / before),
            defaultsRatio: ours === null || before === null ? null : r4(ours / before),
            gcOursDefaults: c(`ours-${adapter}`)?.gcInstructionsPerDelivery ?? null,
            gcOursReconcileOff: c(`ours-${adapter}-reconcile-off`)?.gcInstructionsPerDelivery ?? null,
            gcBefore: c(`ours-${adapter}-before`)?.gcInstructionsPerDelivery ?? null,
          },
        ];
      }),
    );
  }
  if (cs) {
    const s = cs.summary;
    issue.sources.currentState = {
      file: 'results/current-state.json',
      date: cs.date,
      finishedAt: cs.finishedAt,
      load: [cs.machine.loadAverageAtStart?.[0], cs.machine.loadAverageAtEnd?.[0]],
      config: cs.config,
    };
    results.currentState = {
      measuredAt: cs.date,
      getsPerDelivery: s.getsPerDelivery,
      getsPerBurstMax: s.getsPerBurstMax,
      cpuPerDeliveryVsDefault: s.cpuPerDeliveryVsDefault,
      appCpuUsPerDelivery: s.appCpuUsPerDelivery,
      addedCpuUsPerDelivery: s.addedCpuUsPerDelivery,
      latencyUsMedian: s.latencyUsMedian,
      addedLatencyUsMedian: s.addedLatencyUsMedian,
      latencyVsDefault: s.latencyVsDefault,
      copyLatencyUsMedian: s.copyLatencyUsMedian,
      addedCopyLatencyUsMedian: s.addedCopyLatencyUsMedian,
      postsPerDelivery: s.postsPerDelivery,
      retrieve: s.retrieve,
      config: cs.config,
    };
    issue.figures.currentState = results.currentState;
  }
  // Beside the run of record: one delivery per intent (no duplicates), and the default retrieve budget.
  for (const [key, file] of [
    ['single', 'current-state-burst1.json'],
    ['defaultBudget', 'current-state-budget5.json'],
  ]) {
    const run = read(`${dir}${file}`);
    if (run) issue.figures[key] = { file: `results/${file}`, date: run.date, config: run.config, summary: run.summary };
  }
  issue.targets = targetsOf(issue.figures);
  results.issue42 = issue;
}

function targetsOf(f) {
  const t = [];
  const add = (target, figure, anchor, beside, met) =>
    t.push({ target, figure, anchor, beside, met: figure === undefined || figure === null ? null : met });
  for (const adapter of ['express', 'fastify']) {
    const i = f.instructions?.[adapter];
    const name = adapter === 'express' ? 'Express' : 'Fastify';
    add(
      `default mode, inline memory path, ${name}, like for like (reconcile off): within 2 % of 4183104 (instructions per delivery)`,
      i?.oursReconcileOff,
      i?.before,
      `×${i?.likeForLikeRatio ?? '—'}; GC ${i?.gcOursReconcileOff ?? '—'} vs ${i?.gcBefore ?? '—'}`,
      i?.likeForLikeRatio <= 1.02,
    );
    add(
      `default mode, inline memory path, ${name}, each side's defaults (reconciliation now on): within 2 % of 4183104`,
      i?.oursDefaults,
      i?.before,
      `×${i?.defaultsRatio ?? '—'}; GC ${i?.gcOursDefaults ?? '—'} vs ${i?.gcBefore ?? '—'}`,
      i?.defaultsRatio <= 1.02,
    );
  }
  const c = f.currentState;
  add(
    'current-state mode: at most 1 GET per intent per burst of its deliveries',
    c?.getsPerBurstMax,
    1,
    `${c?.getsPerDelivery ?? '—'} GETs per delivery (bursts of ${c?.config?.burst ?? '—'} copies); default mode 0`,
    c?.getsPerBurstMax <= 1,
  );
  add(
    'current-state mode: app CPU per delivery vs the default mode (reported)',
    c?.cpuPerDeliveryVsDefault,
    c ? `${c.appCpuUsPerDelivery.default} µs default` : undefined,
    c
      ? `${c.appCpuUsPerDelivery.current} µs (+${c.addedCpuUsPerDelivery}); the retrieve's app CPU ${c.retrieve.appCpuUsPerDelivery} µs per delivery (${c.retrieve.appCpuUsPerRetrieve} µs per GET; the simulator's own ${c.retrieve.simulatorCpuUsPerGet} µs per GET, not in it)`
      : '—',
    'reported',
  );
  add(
    'current-state mode: added latency per request, median (reported)',
    c?.addedLatencyUsMedian,
    c ? `${c.latencyUsMedian.default} µs default` : undefined,
    c
      ? `×${c.latencyVsDefault}; per copy to its 2xx +${c.addedCopyLatencyUsMedian} µs (${c.copyLatencyUsMedian.current} vs ${c.copyLatencyUsMedian.default}); the retrieve alone ${c.retrieve.wallUsPerRetrieve} µs wall`
      : '—',
    'reported',
  );
  return t;
}

/** The section "Issue 42: current-state handling" of RESULTS.md. */
export function renderIssue42(results) {
  const issue = results.issue42;
  if (!issue) return '';
  const s = issue.sources;
  const f = issue.figures;
  const x = (value) => (value === undefined || value === null ? '—' : value);
  const num = (value) => (Number.isFinite(value) ? value.toLocaleString('en') : '—');
  const big = (value) => (typeof value === 'number' && value > 10_000 ? num(value) : x(value));
  const out = [
    '## Issue 42: current-state handling',
    '',
    'Each figure beside its anchor from the same run; ratios are the median of round-by-round ratios over interleaved rounds.',
    'What bounds them, commands, time and load: [NOTES.md](NOTES.md), "Issue 42".',
    '',
    '| target | figure | anchor (same run) | beside it | met |',
    '|---|---:|---:|---|:---:|',
    ...issue.targets.map(
      (t) =>
        `| ${t.target} | ${big(t.figure)} | ${big(t.anchor)} | ${t.beside} | ${t.met === null ? '—' : t.met === 'reported' ? 'reported' : t.met ? 'yes' : '**no**'} |`,
    ),
    '',
  ];
  if (f.instructions) {
    const c = s.instructions;
    out.push(
      `Inline memory path, instructions per delivery (bench/callgrind.js, ${c.date}; ${c.config.warmup.toLocaleString('en')} uninstrumented warm-up + ${c.config.deliveries.toLocaleString('en')} counted deliveries, fair scheduling, fake clock; \`before\` = 4183104, main before the merge of current-state handling, where reconciliation was off unless configured):`,
      '',
      '| adapter | ours, defaults (reconcile on) | ours, reconcile off | before | off / before | defaults / before | GC: defaults, off, before |',
      '|---|---:|---:|---:|---:|---:|---|',
      ...Object.entries(f.instructions).map(
        ([adapter, i]) =>
          `| ${adapter} | ${num(i.oursDefaults)} | ${num(i.oursReconcileOff)} | ${num(i.before)} | ${x(i.likeForLikeRatio)} | ${x(i.defaultsRatio)} | ${num(i.gcOursDefaults)}, ${num(i.gcOursReconcileOff)}, ${num(i.gcBefore)} |`,
      ),
      '',
    );
  }
  if (f.currentState) {
    const c = f.currentState;
    const src = s.currentState;
    out.push(
      `Current-state mode beside the default (bench/current-state.bench.js, ${src.date} – ${src.finishedAt}, load ${src.load.join(' → ')}; ${src.config.rounds} interleaved rounds of ${src.config.intents} intents × bursts of ${src.config.burst} concurrent copies, ${src.config.adapter}, the in-process PaymentsSimulator as the service, reconciliation on with \`maxRetrievesPerSecond: ${src.config.maxRetrievesPerSecond}\`; medians):`,
      '',
      '| per delivery of a burst | default | current | current vs default |',
      '|---|---:|---:|---:|',
      `| GETs (simulator's counter) | 0 | ${c.getsPerDelivery} (max ${c.getsPerBurstMax} per burst) | |`,
      `| app CPU µs (its 409s' redeliveries included) | ${c.appCpuUsPerDelivery.default} | ${c.appCpuUsPerDelivery.current} | ×${c.cpuPerDeliveryVsDefault} (+${c.addedCpuUsPerDelivery}) |`,
      `| requests sent (409 busy redelivered) | ${c.postsPerDelivery.default} | ${c.postsPerDelivery.current} | |`,
      `| latency per request µs, median | ${c.latencyUsMedian.default} | ${c.latencyUsMedian.current} | ×${c.latencyVsDefault} (+${c.addedLatencyUsMedian}) |`,
      `| latency per copy to its 2xx µs, median (redelivered at once) | ${c.copyLatencyUsMedian.default} | ${c.copyLatencyUsMedian.current} | +${c.addedCopyLatencyUsMedian} |`,
      '',
      `The retrieve alone (the app's own client, one GET at a time, after each current round): ${c.retrieve.appCpuUsPerRetrieve} µs of app CPU and ${c.retrieve.wallUsPerRetrieve} µs wall per GET, the simulator ${c.retrieve.simulatorCpuUsPerGet} µs per GET served (its process, not in the app's CPU); ${c.retrieve.appCpuUsPerDelivery} µs per delivery at ${c.getsPerDelivery} GETs per delivery: ${x(c.retrieve.shareOfAddedCpu)} of the CPU the current mode adds.`,
      '',
      ...[f.single, f.defaultBudget]
        .filter(Boolean)
        .map(
          (run) =>
            `Beside it (${run.file}, ${run.date}; ${run.config.rounds} rounds of ${run.config.intents} intents × bursts of ${run.config.burst}, \`maxRetrievesPerSecond: ${run.config.maxRetrievesPerSecond}\`): ${run.summary.getsPerDelivery} GETs per delivery; app CPU ${run.summary.appCpuUsPerDelivery.default} → ${run.summary.appCpuUsPerDelivery.current} µs (×${run.summary.cpuPerDeliveryVsDefault}), of which the retrieve ${run.summary.retrieve.appCpuUsPerDelivery} µs; latency per request ${run.summary.latencyUsMedian.default} → ${run.summary.latencyUsMedian.current} µs, per copy to its 2xx ${run.summary.copyLatencyUsMedian.default} → ${run.summary.copyLatencyUsMedian.current} µs.\n`,
        ),
      'Keys: `currentState.getsPerDelivery`, `currentState.cpuPerDeliveryVsDefault`, and the rest of `currentState`; every figure above under `issue42`.',
      '',
    );
  }
  return out.join('\n');
}
