import { evaluateTargets } from './targets.js';

/** Which baseline each scenario is compared with. */
const BASELINE_OF = {
  'ours-express': 'baseline-express',
  'ours-fastify': 'baseline-fastify',
  'ours-express-redis': 'baseline-express',
  'ours-express-queued': 'baseline-express',
  'peer-golevelup-stripe': 'peer-baseline',
  'ours-express-before': 'baseline-express',
  'ours-fastify-before': 'baseline-fastify',
  'ours-express-default-logs': 'baseline-express',
  'ours-fastify-default-logs': 'baseline-fastify',
  'ours-express-default-logs-before': 'baseline-express',
  'ours-fastify-default-logs-before': 'baseline-fastify',
};

const fmt = (v, digits = 2) => (v == null || !Number.isFinite(v) ? '—' : v.toFixed(digits));

function rows(results) {
  return Object.entries(results.scenarios).map(([id, s]) => {
    const base = BASELINE_OF[id] ? results.scenarios[BASELINE_OF[id]] : undefined;
    const vs = base?.rps && s.rps ? s.rps / base.rps : undefined;
    return { id, s, vs, base: BASELINE_OF[id] };
  });
}

/** A plain-text table for the terminal. */
export function renderConsoleTable(results) {
  const lines = [
    `${'scenario'.padEnd(24)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'vs base'.padStart(7)} ${'non-2xx'.padStart(7)} ${'srv cpu'.padStart(7)} ${'µs/req'.padStart(7)}`,
  ];
  for (const { id, s, vs } of rows(results)) {
    if (s.unavailable) {
      lines.push(`${id.padEnd(24)} not run: ${s.unavailable}`);
      continue;
    }
    lines.push(
      `${id.padEnd(24)} ${fmt(s.rps, 0).padStart(7)} ${fmt(s.p50Ms).padStart(7)} ${fmt(s.p99Ms).padStart(7)} ${(vs ? fmt(vs, 3) : '').padStart(7)} ${String(s.non2xx).padStart(7)} ${fmt(s.serverCores).padStart(7)} ${fmt(s.serverCpuUsPerRequest, 0).padStart(7)}`,
    );
  }
  lines.push(
    '',
    'ratios: ' +
      Object.entries(results.ratios)
        .map(([k, v]) => `${k} ${v ?? '—'}`)
        .join(', '),
  );
  lines.push(
    'server CPU per request, ratios: ' +
      Object.entries(results.cpuPerRequest)
        .map(([k, v]) => `${k} ${v ?? '—'}`)
        .join(', '),
  );
  if (results.memory) lines.push(`memory: retained100kMB ${results.memory.retained100kMB}`);
  return lines.join('\n');
}

/** bench/RESULTS.md: the latest full run, with the machine, the medians, the ratios and the targets, and the instruction counts of bench/callgrind.js when given. */
export function renderResultsMarkdown(results, instructions) {
  const m = results.machine;
  const v = results.versions;
  const c = results.config;
  const out = [];
  out.push('# Benchmark results');
  out.push('');
  out.push('Written by `npm run bench` (bench/run.js) from its latest full run; raw figures in');
  out.push('[`results/latest.json`](results/latest.json). How the scenarios are built: README, section "Benchmarks".');
  out.push('Profile findings, the fix they led to and why a target is missed: [NOTES.md](NOTES.md).');
  out.push('');
  out.push(`- date: ${results.date} (run took ${results.durationS} s)`);
  out.push(
    `- machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGB} GB memory (load average at start ${m.loadAverageAtStart.join(', ')})`,
  );
  out.push(
    `- Node ${v.node}, Nest ${v.nest} (ours and its baselines); peer: @golevelup/nestjs-stripe ${v.peerModule ?? '—'} on Nest ${v.peerNest ?? '—'}, stripe ${v.stripe ?? '—'}`,
  );
  out.push(
    `- load: ${c.loadGenerator === 'wrk' ? `wrk ${v.wrk} (1 thread, so the server keeps a core of its own; pre-signed raw requests from a file)` : `autocannon ${v.autocannon}`}, ${c.connections} connections, pipelining ${c.pipelining}, 127.0.0.1; ${c.rounds} interleaved rounds of ${c.warmupS} s warm-up + ${c.durationS} s measured, a fresh server process per scenario and round; 1 KB signed payload, fresh event id per request; Nest log levels ${c.logLevels}`,
  );
  out.push('- figures are medians across rounds; ratios are between medians of this same run');
  out.push('');
  out.push('## Webhook ingestion');
  out.push('');
  out.push(
    '| scenario | req/s | p50 ms | p99 ms | vs its baseline | non-2xx | server CPU (cores) | server CPU µs/request |',
  );
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const { id, s, vs, base } of rows(results)) {
    if (s.unavailable) {
      out.push(`| \`${id}\`: ${s.title} | not run: ${s.unavailable} | | | | | | |`);
      continue;
    }
    out.push(
      `| \`${id}\`: ${s.title} | ${fmt(s.rps, 0)} | ${fmt(s.p50Ms)} | ${fmt(s.p99Ms)} | ${vs ? `${fmt(vs, 3)} (of \`${base}\`)` : '—'} | ${s.non2xx} | ${fmt(s.serverCores)} | ${fmt(s.serverCpuUsPerRequest, 0)} |`,
    );
  }
  out.push('');
  out.push('## Ratios');
  out.push('');
  out.push('| ratio | value |');
  out.push('|---|---:|');
  for (const [k, val] of Object.entries(results.ratios)) out.push(`| \`${k}\` | ${val ?? '—'} |`);
  out.push('');
  out.push(
    'Server CPU time per request, ours over the reference (> 1: we spend more per request; depends less on machine noise than req/s):',
  );
  out.push('');
  out.push('| ratio | value |');
  out.push('|---|---:|');
  for (const [k, val] of Object.entries(results.cpuPerRequest)) out.push(`| \`${k}\` | ${val ?? '—'} |`);
  out.push('');
  if (results.memory) {
    const mem = results.memory;
    const st = mem.steadyState;
    out.push('## Memory');
    out.push('');
    out.push(
      `- \`MemoryIdempotencyStore\` holding ${mem.retainedEvents} completed events: **${mem.retained100kMB} MB** of heap (${mem.bytesPerEvent} bytes per event), plus ${mem.retainedTypedArraysMB} MB outside the heap (array buffers)`,
    );
    out.push(
      `- steady state: ${st.deliveries} deliveries through the dispatcher into a store with maxEntries ${st.maxEntries}: store size ${st.storeSize}, heap ${st.heapMB} MB above the start, growth over the second half ${st.growthSecondHalfMB} MB (samples: ${st.samples.map((x) => `${x.deliveries}: ${x.heapMB} MB`).join(', ')})`,
    );
    out.push('');
  }
  if (results.client) {
    out.push('## API client');
    out.push('');
    out.push('| mode | calls | ours ms | raw axios ms | ours / axios | sockets ours | sockets axios |');
    out.push('|---|---:|---:|---:|---:|---:|---:|');
    for (const mode of ['sequential', 'concurrent']) {
      const x = results.client[mode];
      out.push(
        `| ${mode} (concurrency ${x.concurrency}) | ${x.calls} | ${x.oursWallMs} | ${x.axiosWallMs} | ${x.oursVsAxios} | ${x.oursSockets} | ${x.axiosSockets} |`,
      );
    }
    out.push('');
  }
  if (instructions) out.push(...renderInstructions(instructions), '');
  out.push('## Targets (issue 15)');
  out.push('');
  out.push('| target | value | |');
  out.push('|---|---:|---|');
  for (const t of evaluateTargets(results, instructions))
    out.push(`| ${t.text} | ${t.value ?? '—'} | ${t.pass === null ? 'not measured' : t.pass ? 'pass' : '**miss**'} |`);
  out.push('');
  if (results.warnings.length || results.failures.length) {
    out.push('## Warnings');
    out.push('');
    for (const w of [...results.failures, ...results.warnings]) out.push(`- ${w}`);
    out.push('');
  }
  return out.join('\n');
}

/** The section of RESULTS.md with the instruction counts of bench/callgrind.js (results/instructions.json). */
export function renderInstructions(instructions) {
  const c = instructions.config;
  const out = [];
  out.push('## Instructions per delivery (callgrind)');
  out.push('');
  out.push(
    `Counted by \`npm run bench:instructions\` (bench/callgrind.js, ${instructions.tool}) on ${instructions.date.slice(0, 10)}: ${c.warmup} warm-up then ${c.deliveries} measured deliveries, ${c.injection}; only the measured deliveries are counted${c.nodeFlags ? `; node ${c.nodeFlags}` : ''}. Meant to be independent of machine load; how well counts of one case repeat is in NOTES.md (without --single-threaded they moved by up to ±20 % between runs). Raw figures: [\`results/instructions.json\`](results/instructions.json).`,
  );
  out.push('');
  out.push('| case | log levels | instructions per delivery |');
  out.push('|---|---|---:|');
  for (const [id, r] of Object.entries(instructions.cases)) {
    out.push(
      `| \`${id}\`: ${r.title} | ${r.logLevels ?? '—'} | ${r.error ? `failed: ${r.error.split('\n')[0]}` : r.instructionsPerDelivery.toLocaleString('en')} |`,
    );
  }
  out.push('');
  out.push('| ours over the bare route | ratio | net of the injection (harness) |');
  out.push('|---|---:|---:|');
  for (const [k, v] of Object.entries(instructions.ratios))
    out.push(`| \`${k}\` | ${v.ratio ?? '—'} | ${v.netOfHarness ?? '—'} |`);
  return out;
}

/**
 * The instruction figures latest.json carries (issue 22, item 6), from bench/results/instructions.json:
 * ours over each physical limit net of the injection's own cost, and every case's count per delivery.
 */
export function instructionsSummary(instructions, clientInstructions) {
  if (!instructions) return undefined;
  // Issue 31, item 3: the API client per call (bench/callgrind.js --client, results/client-instructions.json).
  const client = clientInstructions
    ? {
        clientCountedAt: clientInstructions.date,
        clientVsAxiosSequential: clientInstructions.ratios.clientSequentialVsAxios?.ratio ?? null,
        clientVsAxiosConcurrent: clientInstructions.ratios.clientConcurrentVsAxios?.ratio ?? null,
        clientPerCall: Object.fromEntries(
          Object.entries(clientInstructions.cases).map(([id, c]) => [id, c.instructionsPerDelivery ?? null]),
        ),
        clientSteadyPerCall: Object.fromEntries(
          Object.entries(clientInstructions.cases).map(([id, c]) => [id, c.steadyInstructionsPerDelivery ?? null]),
        ),
      }
    : {};
  const perDelivery = Object.fromEntries(
    Object.entries(instructions.cases)
      .filter(([, c]) => c.instructionsPerDelivery !== undefined)
      .map(([id, c]) => [id, c.instructionsPerDelivery]),
  );
  const loads = Object.values(instructions.cases)
    .flatMap((c) => [c.loadAverageAtStart, c.loadAverage])
    .filter((load) => typeof load === 'number');
  return {
    countedAt: instructions.date,
    // The machine's load average over the counts (lowest, highest): counts are meant not to depend on it.
    loadAverageRange: loads.length > 0 ? [Math.min(...loads), Math.max(...loads)] : null,
    fastifyVsPlainFastifyNet: instructions.ratios.fastifyVsPlainFastify?.netOfHarness ?? null,
    expressVsNodeLimitNet: instructions.ratios.expressVsNodeLimit?.netOfHarness ?? null,
    fastifyVsBaselineNet: instructions.ratios.fastifyVsBaseline?.netOfHarness ?? null,
    expressVsBaselineNet: instructions.ratios.expressVsBaseline?.netOfHarness ?? null,
    // Issue 31: ours over the cheapest bare Nest route (`@Res()`, Map dedupe), gross (the robust figure)
    // and net of the injection harness; and the counts without V8's compilers in the window.
    oursVsResBareExpress: instructions.ratios.expressVsResBaseline?.ratio ?? null,
    oursVsResBareFastify: instructions.ratios.fastifyVsResBaseline?.ratio ?? null,
    oursVsResBareExpressNet: instructions.ratios.expressVsResBaseline?.netOfHarness ?? null,
    oursVsResBareFastifyNet: instructions.ratios.fastifyVsResBaseline?.netOfHarness ?? null,
    nodeFlags: instructions.config?.nodeFlags ?? null,
    perDelivery,
    steadyPerDelivery: Object.fromEntries(
      Object.entries(instructions.cases)
        .filter(([, c]) => c.steadyInstructionsPerDelivery !== undefined)
        .map(([id, c]) => [id, c.steadyInstructionsPerDelivery]),
    ),
    ...client,
  };
}
