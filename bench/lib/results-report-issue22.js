/**
 * The sections of bench/RESULTS.md for issue 22, written from the figures of the run (never by hand):
 * the durable paths with their round trips and where the machine's cores went, the queued mode and
 * the instances (bench/scale.bench.js), how cost grows (bench/callgrind.js --growth and
 * bench/memory.bench.js --growth, with their charts) and the keys latest.json carries.
 */

const fmt = (n, digits = 2) => (n === undefined || n === null || Number.isNaN(n) ? '—' : Number(n).toFixed(digits));
const int = (n) => (n === undefined || n === null ? '—' : Math.round(n).toLocaleString('en-US'));

const DURABLE = [
  ['ours-express', 'memory store (the reference)', '0'],
  ['ours-express-redis', 'RedisIdempotencyStore, single node', '2 commands (claim, complete)'],
  ['ours-express-redis-cluster', 'RedisIdempotencyStore, 3-master Cluster', '2 commands (claim, complete)'],
  ['ours-express-postgres', 'PostgresIdempotencyStore (grouped statements)', null],
  ['ours-express-inbox', 'transactional inbox, pgTransactionRunner', null],
  ['ours-express-queued', 'queued: BullMQ enqueue only', '2 scripts (job state, add)'],
];

/** Durable paths: req/s against the memory store, round trips, and the cores of receiver, engines and machine. */
export function renderDurablePaths(results) {
  const memory = results.scenarios['ours-express']?.rps;
  const out = ['## Durable paths: round trips and where the cores went (issue 22, items 2-3)', ''];
  out.push(
    "Same run as above. The SQL statements per delivery count every statement the pool's clients sent, over the",
    'deliveries (the PostgreSQL store groups the claims and the completions of one event-loop turn into one',
    'statement, so it falls below 2 under load). "Engines" is the CPU of the PostgreSQL backends and',
    'redis-server processes during the measured seconds (`/proc`), "machine" every core\'s busy time: with',
    'the machine not saturated, the closed loop of 16 connections is bound by the latency of the round trips',
    "on each delivery's path, not by the receiver's CPU.",
    '',
    '| scenario | req/s | vs memory | p50 / p99 ms | statements or commands per delivery | receiver µs/req | engines µs/req | machine busy cores |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const [id, title, trips] of DURABLE) {
    const s = results.scenarios[id];
    if (!s || s.unavailable || s.rps === undefined) continue;
    const sql = s.sqlPerDelivery != null ? `${s.sqlPerDelivery} SQL statements` : trips;
    out.push(
      `| \`${id}\`: ${title} | ${int(s.rps)} | ${id === 'ours-express' ? '1' : fmt(s.rps / memory, 3)} | ${fmt(s.p50Ms)} / ${fmt(s.p99Ms)} | ${sql} | ${fmt(s.serverCpuUsPerRequest, 0)} | ${fmt(s.engineCpuUsPerRequest, 0)} | ${fmt(s.machineBusyCores)} |`,
    );
  }
  out.push('');
  return out.join('\n');
}

/** Queued mode with 1 and 2 workers, and 1-3 instances behind a proxy (bench/scale.bench.js). */
export function renderScale(scale) {
  if (!scale) return '';
  const out = ['## Queued mode and instances (issue 22, items 4-5; `bench/scale.bench.js`)', ''];
  out.push(`Run ${scale.date}; ${scale.machine.note}`, '');
  const inline = scale.queued.inlineMemory;
  out.push('Answer of a delivery (the receiver only enqueues), next to inline in the same run:', '');
  out.push('| receiver | req/s | p50 ms | p99 ms | jobs missing |', '|---|---:|---:|---:|---:|');
  if (inline)
    out.push(`| inline, memory store | ${int(inline.rps)} | ${fmt(inline.p50Ms)} | ${fmt(inline.p99Ms)} | — |`);
  for (const [engine, label] of [
    ['redis', 'queued, single Redis'],
    ['cluster', 'queued, Redis Cluster'],
  ]) {
    const e = scale.queued[engine]?.enqueue;
    if (e) out.push(`| ${label} | ${int(e.rps)} | ${fmt(e.p50Ms)} | ${fmt(e.p99Ms)} | ${e.jobsMissing} |`);
  }
  out.push(
    '',
    `Handled events per second (${scale.config.events} deliveries, worker concurrency ${scale.config.workerConcurrency}):`,
    '',
  );
  out.push(
    '| engine | workers | first send → last handled (/s) | backlog drained (/s) | handled | duplicates | lost |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const engine of ['redis', 'cluster']) {
    for (const n of ['1', '2']) {
      const w = scale.queued[engine]?.workers?.[n];
      if (!w) continue;
      out.push(
        `| ${engine === 'redis' ? 'single Redis' : 'Redis Cluster'} | ${n} | ${int(w.handledPerS)} | ${int(w.drain?.handledPerS)} | ${w.handled} of ${w.accepted2xx} | ${w.duplicates} | ${w.lost} |`,
      );
    }
  }
  out.push('', '![Queued mode: handled events per second](../docs/bench-scale-queued.png)', '');
  out.push('Receivers (inline, `RedisIdempotencyStore`) behind a node:http round-robin proxy:', '');
  out.push(
    '| processes | deliveries/s | p50 ms | p99 ms | handler runs | distinct events | duplicates | redelivered, ran again |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const [n, r] of Object.entries(scale.instances ?? {})) {
    out.push(
      `| ${n} | ${int(r.ok2xxPerS)} | ${fmt(r.p50Ms)} | ${fmt(r.p99Ms)} | ${r.handlerRuns} | ${r.distinctEvents} | ${r.duplicates} | ${r.redelivery?.newHandlerRuns ?? '—'} of ${r.redelivery?.sent ?? '—'} |`,
    );
  }
  out.push('', '![Deliveries per second vs receiver processes](../docs/bench-scale-instances.png)', '');
  return out.join('\n');
}

/** How cost grows: handlers, payload, retained ids (figures of bench/callgrind.js --growth and memory.bench.js --growth). */
export function renderGrowth(growth) {
  if (!growth?.instructionsPerDelivery) return '';
  const per = growth.instructionsPerDelivery;
  const out = ['## How cost grows (issue 22, item 5)', ''];
  out.push(
    `Instructions per delivery counted by \`node bench/callgrind.js --growth\` on ${growth.countedAt} (Fastify,`,
    'in process, `--single-threaded`); heap by `node --expose-gc bench/memory.bench.js --growth`; charts by',
    '`node bench/charts.js`. Counts of one case move by up to ±20 % between runs: read them within the run.',
    '',
    '![Instructions per delivery vs handlers](../docs/bench-growth-handlers.png)',
    '',
    '| handlers | instructions per delivery |',
    '|---|---:|',
    `| 1 event type, 1 handler | ${int(per['ours-fastify'])} |`,
    `| 10 event types, one handler each | ${int(per['growth-types-10'])} |`,
    `| 100 event types, one handler each | ${int(per['growth-types-100'])} |`,
    `| 10 handlers on the delivered event | ${int(per['growth-handlers-10'])} |`,
    '',
    '![Instructions per delivery vs payload size](../docs/bench-growth-payload.png)',
    '',
    '| payload | ours | plain Fastify |',
    '|---|---:|---:|',
    `| 1 KB | ${int(per['ours-fastify'])} | ${int(per['plain-fastify'])} |`,
    `| 64 KB | ${int(per['growth-payload-64k'])} | ${int(per['growth-plain-fastify-64k'])} |`,
    `| 1 MB | ${int(per['growth-payload-1m'])} | ${int(per['growth-plain-fastify-1m'])} |`,
    '',
  );
  const bytes = 1024 * 1024 - 64 * 1024;
  if (per['growth-payload-1m'] && per['growth-payload-64k']) {
    out.push(
      `From 64 KB to 1 MB ours adds ${fmt((per['growth-payload-1m'] - per['growth-payload-64k']) / bytes, 1)} instructions per byte, the plain route ${fmt((per['growth-plain-fastify-1m'] - per['growth-plain-fastify-64k']) / bytes, 1)}: linear in bytes, no quadratic step.`,
      '',
    );
  }
  if (growth.memory?.retainedGrowth) {
    out.push('![Heap retained vs event ids](../docs/bench-growth-memory.png)', '');
    out.push('| ids held by the memory store | heap (MB) | bytes per id |', '|---:|---:|---:|');
    for (const r of growth.memory.retainedGrowth) out.push(`| ${int(r.events)} | ${r.heapMB} | ${r.bytesPerEvent} |`);
    out.push('');
  }
  return out.join('\n');
}

/** Every figure's key in latest.json (issue 22, item 6), so a script can check them. */
export function renderKeys(results) {
  const out = ['## Keys of `results/latest.json`', ''];
  out.push(
    'Kept as they are: `ratios.inboxVsMemory`, `ratios.postgresVsMemory`, `ratios.redisVsMemory`,',
    '`ratios.clientVsAxios`, `memory.retained100kMB`, `instructions.fastifyVsPlainFastifyNet`,',
    '`instructions.expressVsNodeLimitNet`. All of them:',
    '',
  );
  const list = (path, object) =>
    object && typeof object === 'object'
      ? Object.keys(object)
          .map((k) => `\`${path}.${k}\``)
          .join(', ')
      : '—';
  out.push(`- ratios (req/s, ours over the reference): ${list('ratios', results.ratios)}`);
  out.push(`- server CPU per request, ours over the reference: ${list('cpuPerRequest', results.cpuPerRequest)}`);
  const anyScenario = Object.values(results.scenarios).find((s) => s.rps !== undefined) ?? {};
  out.push(
    `- per scenario (\`scenarios.<id>.*\`): ${Object.keys(anyScenario)
      .filter((k) => k !== 'perRound' && k !== 'title')
      .map((k) => `\`${k}\``)
      .join(', ')}, and \`sqlPerDelivery\` on the PostgreSQL ones`,
  );
  out.push(`- memory: ${list('memory', results.memory)}`);
  out.push(`- instructions (callgrind): ${list('instructions', results.instructions)}`);
  out.push(
    `- growth: ${list('growth', results.growth)} (\`growth.instructionsPerDelivery.<case>\`, \`growth.memory.retainedGrowth[]\`)`,
  );
  if (results.scale)
    out.push(
      '- scale: `scale.queued.{inlineMemory,redis,cluster}` (`.enqueue.{rps,p50Ms,p99Ms,jobsMissing}`, `.workers.{1,2}.{handledPerS,drain.handledPerS,duplicates,lost}`), `scale.instances.{1,2,3}.{ok2xxPerS,duplicates,redelivery.newHandlerRuns}`',
    );
  if (results.reconcile)
    out.push(
      '- reconcile (bench/reconcile.bench.js, not part of this run): `reconcile.sweepIntentsPerSecond`, `reconcile.firstCheckP99Seconds1M`, `reconcile.bytesPerWatchedIntent.{memory,redis,postgres}`, `reconcile.ceilingIntentsPerSecond.{memory,redis,postgres}`, `reconcile.measuredAt`, `reconcile.largestBacklog`',
    );
  if (results.issue40)
    out.push(
      '- issue 40: `commandsPerDelivery.{redis,redisCluster,measuredAt}`, `statementsPerDelivery.{postgres,inbox,measuredAt}`, `issue40.{sources,figures,targets}`',
    );
  out.push('');
  return out.join('\n');
}

/**
 * Issue 31: the strongest anchors beside ours, from the callgrind counts (`instructions`), the client's
 * counts per call, and bench/engines.bench.js (`engines`): each figure with its date and load.
 */
export function renderIssue31(results) {
  const i = results.instructions;
  const out = [
    '## The strongest anchors (issue 31)',
    '',
    `Counted on a shared machine (${results.machine?.cpu ?? '?'}, ${results.machine?.cores ?? '?'} cores; load average ${i?.loadAverageRange ? i.loadAverageRange.join('-') : '?'} during the counts, each case's own in results/instructions.json); the HTTP tables above are the full run of ${results.date}.`,
    '',
  ];
  if (i?.perDelivery) {
    const n = (id) => (i.perDelivery[id] === undefined ? '—' : i.perDelivery[id].toLocaleString('en'));
    const st = (id) => (i.steadyPerDelivery?.[id] === undefined ? '—' : i.steadyPerDelivery[id].toLocaleString('en'));
    out.push(
      `Instructions per delivery (callgrind, ${i.countedAt}, counted Node flags \`${i.nodeFlags ?? '?'}\`; gross, and without V8's compiler in brackets). Gross ratios between cases of this one run are the figures to quote (bench/NOTES.md, "Counts that repeat"):`,
      '',
      '| case | Express | Fastify |',
      '|---|---:|---:|',
      `| ours | ${n('ours-express')} (${st('ours-express')}) | ${n('ours-fastify')} (${st('ours-fastify')}) |`,
      `| cheapest bare Nest route (\`@Res()\`, Map dedupe) | ${n('res-baseline-express')} (${st('res-baseline-express')}) | ${n('res-baseline-fastify')} (${st('res-baseline-fastify')}) |`,
      `| bare Nest route, return value | ${n('baseline-express')} (${st('baseline-express')}) | ${n('baseline-fastify')} (${st('baseline-fastify')}) |`,
      `| plain limit (node:http / Fastify, no Nest) | ${n('plain-node')} (${st('plain-node')}) | ${n('plain-fastify')} (${st('plain-fastify')}) |`,
      `| **ours over the cheapest bare route** | **${i.oursVsResBareExpress ?? '—'}** | **${i.oursVsResBareFastify ?? '—'}** |`,
      '',
    );
  }
  if (i?.clientPerCall) {
    const c = (id) => (i.clientPerCall[id] == null ? '—' : i.clientPerCall[id].toLocaleString('en'));
    out.push(
      `API client, instructions per call (callgrind, ${i.clientCountedAt}): sequential ours ${c('client-ours-sequential')} vs raw axios ${c('client-axios-sequential')} (${i.clientVsAxiosSequential ?? '—'} ×); 32 at a time ours ${c('client-ours-concurrent')} vs ${c('client-axios-concurrent')} (${i.clientVsAxiosConcurrent ?? '—'} ×).`,
      '',
    );
  }
  const a = results.anchors31;
  if (a) {
    out.push(
      `HTTP, the anchors side by side in one run (${a.date}, load average at start ${a.machine.loadAverageAtStart.join(', ')}; ${a.config.rounds} interleaved rounds of ${a.config.warmupS} s + ${a.config.durationS} s, wrk, 16 connections; medians; engine CPU = the bench's own engine processes only):`,
      '',
      '| scenario | req/s (per round) | server CPU µs/req | engine CPU µs/req | SQL/delivery |',
      '|---|---:|---:|---:|---:|',
      ...Object.entries(a.scenarios).map(
        ([id, sc]) =>
          `| \`${id}\` | ${sc.rps} (${sc.rpsPerRound.join(', ')}) | ${sc.serverCpuUsPerRequest} | ${sc.engineCpuUsPerRequest} | ${sc.sqlPerDelivery ?? ''} |`,
      ),
      '',
      `Ratios (req/s, same run): ${[
        'expressVsResBaseline',
        'fastifyVsResBaseline',
        'inboxVsHandWritten',
        'clusterVsHandWritten',
        'redisAofVsRedis',
        'fastifyVsPlainFastify',
        'expressVsPlainNode',
      ]
        .map((k) => `\`${k}\` ${a.ratios?.[k] ?? '—'}`)
        .join(', ')}; per delivery: ${Object.entries(a.perDelivery ?? {})
        .map(([k, v]) => `\`${k}\` ${v ?? '—'}`)
        .join(', ')}.`,
      '',
    );
  }
  const e = results.engines;
  if (e) {
    out.push(
      `Durable paths per delivery without HTTP (bench/engines.bench.js, ${e.date}, load average at start ${e.machine.loadAverageAtStart.join(', ')}; sequential, medians of ${e.config.rounds} rounds of ${e.config.deliveries}; engine CPU = the bench's own engine processes only):`,
      '',
      '| variant | exchanges | receiver CPU µs | engine CPU µs | wall µs |',
      '|---|---:|---:|---:|---:|',
      ...Object.entries(e.variants).map(
        ([id, v]) =>
          `| \`${id}\` | ${v.exchanges ?? (v.scripts != null ? `${v.scripts} (EVALSHA)` : '2 (EVALSHA)')} | ${v.receiverCpuUs} | ${v.engineCpuUs} | ${v.wallUs} |`,
      ),
      '',
      `Ratios: ${Object.entries(e.ratios)
        .map(([k, v]) => `\`${k}\` ${v ?? '—'}`)
        .join(', ')}.`,
      '',
    );
  }
  return out.join('\n');
}
