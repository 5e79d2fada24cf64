/**
 * Issue 40 (one record per intent): its figures in results/latest.json, each beside its anchor of the
 * same run, from the runs of record of the issue (each file as its run wrote it; a missing one leaves
 * its figures out):
 *   results/engines.json                   node bench/engines.bench.js: scripts and statements per delivery,
 *                                          engine and receiver CPU per delivery, ours against the one-key
 *                                          delivery of the build before (`*-before`) and the hand-written anchors
 *   results/issue40-http.json              node bench/run.js --only ... --out: req/s and server CPU over HTTP,
 *                                          ratios as the median of the round-by-round ratios (`pairedRatios`)
 *   results/instructions-issue40-16000.json  node bench/callgrind.js: the inline memory path, ours and `*-before`
 *   results/memory-issue40.json            node --expose-gc bench/memory.bench.js --compare: heap per handled delivery
 * Keys set here:
 *   commandsPerDelivery.redis, commandsPerDelivery.redisCluster   EVALSHA/EVAL per delivery (INFO commandstats)
 *   statementsPerDelivery.postgres, statementsPerDelivery.inbox   statements sent per delivery (the pool's client counted)
 *   ratios.redisVsMemory, ratios.postgresVsMemory, ratios.clusterVsHandWritten, ratios.inboxVsHandWritten, and the
 *   same four of cpuPerRequest: from the HTTP run of issue 40 when there is one (the full run's stay otherwise)
 *   issue40                                every figure, its anchor, and whether the issue's target is met
 */
import { existsSync, readFileSync } from 'node:fs';

const read = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined);
const r3 = (value) => (Number.isFinite(value) ? Math.round(value * 1000) / 1000 : null);

/** Sets the issue-40 keys of `results` from the files above (kept as they were when there are none). */
export function mergeIssue40(results, benchDir) {
  const dir = `${benchDir}results/`;
  const engines = read(`${dir}engines.json`);
  const http = read(`${dir}issue40-http.json`);
  const counted = read(`${dir}instructions-issue40-16000.json`);
  const memory = read(`${dir}memory-issue40.json`);
  if (!engines && !http && !counted && !memory) return;
  const v = engines?.variants ?? {};
  const p = engines?.pairedRatios ?? {};
  const issue = { sources: {}, figures: {}, targets: [] };

  if (engines) {
    issue.sources.engines = {
      file: 'results/engines.json',
      date: engines.date,
      load: [engines.machine.loadAverageAtStart?.[0], engines.machine.loadAverageAtEnd?.[0]],
      config: engines.config,
    };
    results.commandsPerDelivery = {
      redis: v['ours-redis']?.scripts ?? null,
      redisCluster: v['ours-cluster']?.scripts ?? null,
      measuredAt: engines.date,
    };
    results.statementsPerDelivery = {
      postgres: v['ours-postgres']?.exchanges ?? null,
      inbox: v['ours-inbox']?.exchanges ?? null,
      measuredAt: engines.date,
    };
    const pick = (id) =>
      v[id] && {
        receiverCpuUs: v[id].receiverCpuUs,
        engineCpuUs: v[id].engineCpuUs,
        wallUs: v[id].wallUs,
        ...(v[id].scripts != null
          ? { scripts: v[id].scripts, commandsInScripts: v[id].commandsInScripts, redisScriptUs: v[id].redisScriptUs }
          : {}),
        ...(v[id].exchanges != null ? { statements: v[id].exchanges } : {}),
      };
    issue.figures.engines = Object.fromEntries(Object.keys(v).map((id) => [id, pick(id)]));
    issue.figures.enginesPaired = p;
  }
  if (http) {
    issue.sources.http = {
      file: 'results/issue40-http.json',
      date: http.date,
      load: http.machine?.loadAverageAtStart,
      rounds: http.config?.rounds,
      durationS: http.config?.durationS,
      loadGenerator: http.config?.loadGenerator,
    };
    issue.figures.http = {
      scenarios: Object.fromEntries(
        Object.entries(http.scenarios ?? {}).map(([id, sc]) => [
          id,
          {
            rps: sc.rps,
            serverCpuUsPerRequest: sc.serverCpuUsPerRequest,
            engineCpuUsPerRequest: sc.engineCpuUsPerRequest,
            ...(sc.sqlPerDelivery != null ? { sqlPerDelivery: sc.sqlPerDelivery } : {}),
            rpsPerRound: (sc.perRound ?? []).map((x) => x.rps ?? null),
          },
        ]),
      ),
      ratiosOfMedians: http.ratios,
      pairedRatios: http.pairedRatios,
    };
    results.ratios ??= {};
    results.cpuPerRequest ??= {};
    for (const key of ['redisVsMemory', 'postgresVsMemory', 'clusterVsHandWritten', 'inboxVsHandWritten']) {
      const rps = http.pairedRatios?.rps?.[key];
      if (rps != null) {
        results.ratios[key] = rps;
        results.cpuPerRequest[key] = http.pairedRatios.serverCpuPerRequest[key];
      }
    }
  }
  if (counted) {
    const n = (id) => counted.cases?.[id]?.instructionsPerDelivery;
    issue.sources.instructions = {
      file: 'results/instructions-issue40-16000.json',
      date: counted.date,
      config: counted.config,
    };
    issue.figures.instructions = Object.fromEntries(
      ['express', 'fastify'].map((adapter) => [
        adapter,
        {
          ours: n(`ours-${adapter}`) ?? null,
          before: n(`ours-${adapter}-before`) ?? null,
          ratio: r3(n(`ours-${adapter}`) / n(`ours-${adapter}-before`)),
          gcOurs: counted.cases?.[`ours-${adapter}`]?.gcInstructionsPerDelivery ?? null,
          gcBefore: counted.cases?.[`ours-${adapter}-before`]?.gcInstructionsPerDelivery ?? null,
        },
      ]),
    );
  }
  if (memory) {
    issue.sources.memory = { file: 'results/memory-issue40.json', date: memory.date, config: memory.config };
    issue.figures.memory = {
      oursBytesPerHandledDelivery: memory.variants.ours.bytesPerHandledDelivery,
      beforeBytesPerHandledDelivery: memory.variants.before.bytesPerHandledDelivery,
      oursStoreBytesPerRun: memory.variants.ours.storeBytesPerRun,
      beforeStoreBytesPerKey: memory.variants.before.storeBytesPerRun,
    };
  }
  issue.targets = targetsOf(issue.figures);
  results.issue40 = issue;
}

/**
 * The issue's targets, each with its figure, its anchor of the same run, the CPU per delivery beside it
 * (`beside`), and whether it is met (null: not measured).
 */
function targetsOf(f) {
  const e = f.engines ?? {};
  const p = f.enginesPaired ?? {};
  const h = f.http?.pairedRatios;
  const sc = f.http?.scenarios ?? {};
  const t = [];
  const add = (target, figure, anchor, beside, met) =>
    t.push({ target, figure, anchor, beside, met: figure === undefined || figure === null ? null : met });
  const cpu = (id, engine) =>
    sc[id]
      ? `${sc[id].serverCpuUsPerRequest} µs${engine ? ` + ${engine} ${sc[id].engineCpuUsPerRequest} µs` : ''}`
      : '—';
  add(
    '2 Redis scripts per delivery (claim, complete)',
    e['ours-redis']?.scripts,
    `one-key ${e['ours-redis-before']?.scripts ?? '—'}; Cluster ${e['ours-cluster']?.scripts ?? '—'}`,
    `commands run inside them: ${e['ours-redis']?.commandsInScripts ?? '—'} (one-key ${e['ours-redis-before']?.commandsInScripts ?? '—'})`,
    e['ours-redis']?.scripts <= 2 && (e['ours-cluster']?.scripts ?? 2) <= 2,
  );
  add(
    'PostgreSQL: at most 1 claim and 1 completion statement per delivery',
    e['ours-postgres']?.statements,
    `one-key ${e['ours-postgres-before']?.statements ?? '—'}`,
    `grouped over HTTP: ${sc['ours-express-postgres']?.sqlPerDelivery ?? '—'} per delivery`,
    e['ours-postgres']?.statements <= 2,
  );
  add(
    'Redis engine CPU per delivery <= the one-key delivery (µs)',
    e['ours-redis']?.engineCpuUs,
    e['ours-redis-before']?.engineCpuUs,
    `×${p.redisVsOneKeyEngineCpu ?? '—'} round by round; receiver ${e['ours-redis']?.receiverCpuUs ?? '—'} vs ${e['ours-redis-before']?.receiverCpuUs ?? '—'} µs`,
    p.redisVsOneKeyEngineCpu <= 1,
  );
  add(
    'PostgreSQL engine CPU per delivery <= the one-key delivery (µs)',
    e['ours-postgres']?.engineCpuUs,
    e['ours-postgres-before']?.engineCpuUs,
    `×${p.postgresVsOneKeyEngineCpu ?? '—'} round by round; receiver ${e['ours-postgres']?.receiverCpuUs ?? '—'} vs ${e['ours-postgres-before']?.receiverCpuUs ?? '—'} µs`,
    p.postgresVsOneKeyEngineCpu <= 1,
  );
  add(
    'Redis store >= 0.9x the memory store (req/s, HTTP)',
    h?.rps?.redisVsMemory,
    0.9,
    `CPU/req ${cpu('ours-express-redis', 'Redis')} vs ${cpu('ours-express')} (server ×${h?.serverCpuPerRequest?.redisVsMemory ?? '—'})`,
    h?.rps?.redisVsMemory >= 0.9,
  );
  add(
    'PostgreSQL store >= 0.7x the memory store (req/s, HTTP)',
    h?.rps?.postgresVsMemory,
    0.7,
    `CPU/req ${cpu('ours-express-postgres', 'PostgreSQL')} vs ${cpu('ours-express')} (server ×${h?.serverCpuPerRequest?.postgresVsMemory ?? '—'})`,
    h?.rps?.postgresVsMemory >= 0.7,
  );
  add(
    'Cluster claim >= 0.95x the hand-written one-key claim (req/s, HTTP)',
    h?.rps?.clusterVsHandWritten,
    0.95,
    `CPU/req ${cpu('ours-express-redis-cluster', 'Redis')} vs ${cpu('hand-claim-redis-cluster', 'Redis')} (server ×${h?.serverCpuPerRequest?.clusterVsHandWritten ?? '—'}); without HTTP ${p.clusterVsHandWritten ?? '—'}, engine CPU ×${p.clusterVsHandWrittenEngineCpu ?? '—'}`,
    h?.rps?.clusterVsHandWritten >= 0.95,
  );
  add(
    'inbox >= 0.95x the hand-written inbox (req/s, HTTP)',
    h?.rps?.inboxVsHandWritten,
    0.95,
    `CPU/req ${cpu('ours-express-inbox', 'PostgreSQL')} vs ${cpu('hand-inbox-express', 'PostgreSQL')} (server ×${h?.serverCpuPerRequest?.inboxVsHandWritten ?? '—'}); without HTTP ${p.inboxVsHandWritten ?? '—'}`,
    h?.rps?.inboxVsHandWritten >= 0.95,
  );
  add(
    'inbox PostgreSQL CPU per delivery <= 1.05x the hand-written inbox',
    p.inboxVsHandWrittenPostgresCpu,
    1.05,
    `${e['ours-inbox']?.engineCpuUs ?? '—'} vs ${e['hand-inbox']?.engineCpuUs ?? '—'} µs without HTTP (599366d's inbox ×${p.inboxBeforeVsHandWrittenPostgresCpu ?? '—'}); over HTTP ${sc['ours-express-inbox']?.engineCpuUsPerRequest ?? '—'} vs ${sc['hand-inbox-express']?.engineCpuUsPerRequest ?? '—'} µs/req`,
    p.inboxVsHandWrittenPostgresCpu <= 1.05,
  );
  for (const adapter of ['express', 'fastify']) {
    const i = f.instructions?.[adapter];
    add(
      `inline memory path, ${adapter === 'express' ? 'Express' : 'Fastify'}: within 2 % of 599366d (instructions per delivery)`,
      i?.ours,
      i?.before,
      `×${i?.ratio ?? '—'}; of which GC ${i?.gcOurs ?? '—'} vs ${i?.gcBefore ?? '—'}`,
      i?.ratio <= 1.02,
    );
  }
  add(
    'memory store: retained bytes per handled delivery <= 286',
    f.memory?.oursBytesPerHandledDelivery,
    f.memory?.beforeBytesPerHandledDelivery,
    `the store alone: ${f.memory?.oursStoreBytesPerRun ?? '—'} bytes per record (599366d ${f.memory?.beforeStoreBytesPerKey ?? '—'} per key)`,
    f.memory?.oursBytesPerHandledDelivery <= 286,
  );
  return t;
}

/** The section "Issue 40: one record per intent" of RESULTS.md. */
export function renderIssue40(results) {
  const issue = results.issue40;
  if (!issue) return '';
  const s = issue.sources;
  const f = issue.figures;
  const x = (value) => (value === undefined || value === null ? '—' : value);
  const num = (value) => (Number.isFinite(value) ? value.toLocaleString('en') : '—');
  const out = [
    '## Issue 40: one record per intent',
    '',
    'Each figure beside its anchor from the same run; ratios are the median of round-by-round ratios over interleaved rounds.',
    "The ratios of this section replace the full run's `ratios.redisVsMemory`, `ratios.postgresVsMemory`,",
    '`ratios.clusterVsHandWritten` and `ratios.inboxVsHandWritten` (and the same four `cpuPerRequest`) in latest.json.',
    'What bounds a missed target: [NOTES.md](NOTES.md), "Issue 40".',
    '',
    '| target | figure | anchor (same run) | CPU per delivery beside it | met |',
    '|---|---:|---:|---|:---:|',
    ...issue.targets.map(
      (t) =>
        `| ${t.target} | ${typeof t.figure === 'number' && t.figure > 10_000 ? num(t.figure) : x(t.figure)} | ${typeof t.anchor === 'number' && t.anchor > 10_000 ? num(t.anchor) : x(t.anchor)} | ${t.beside} | ${t.met === null ? '—' : t.met ? 'yes' : '**no**'} |`,
    ),
    '',
  ];
  if (f.engines) {
    const e = s.engines;
    out.push(
      `Per delivery without HTTP (bench/engines.bench.js, ${e.date}, load ${e.load.join(' → ')}; ${e.config.rounds} interleaved rounds of ${e.config.deliveries} sequential deliveries, medians; engine CPU = the bench's own redis-server / PostgreSQL backend; \`*-before\` = 599366d's store, one key):`,
      '',
      '| variant | scripts (commands in them) / statements | receiver CPU µs | engine CPU µs | Redis time in scripts µs | wall µs |',
      '|---|---:|---:|---:|---:|---:|',
      ...Object.entries(f.engines).map(
        ([id, v]) =>
          `| \`${id}\` | ${v.scripts != null ? `${v.scripts} (${v.commandsInScripts})` : x(v.statements)} | ${v.receiverCpuUs} | ${v.engineCpuUs} | ${x(v.redisScriptUs)} | ${v.wallUs} |`,
      ),
      '',
      `Round-by-round ratios (wall: the anchor's time over ours, > 1 faster; CPU: ours over the anchor): ${Object.entries(
        f.enginesPaired,
      )
        .filter(([, value]) => value !== null)
        .map(([k, value]) => `\`${k}\` ${value}`)
        .join(', ')}.`,
      '',
    );
  }
  if (f.http) {
    const h = s.http;
    out.push(
      `Over HTTP (bench/run.js --only, ${h.date}, load at start ${x(h.load?.join(', '))}; ${h.rounds} interleaved rounds of ${h.durationS} s, ${h.loadGenerator}; medians):`,
      '',
      '| scenario | req/s (per round) | server CPU µs/req | engine CPU µs/req | SQL/delivery |',
      '|---|---:|---:|---:|---:|',
      ...Object.entries(f.http.scenarios).map(
        ([id, sc]) =>
          `| \`${id}\` | ${sc.rps} (${sc.rpsPerRound.join(', ')}) | ${sc.serverCpuUsPerRequest} | ${sc.engineCpuUsPerRequest} | ${sc.sqlPerDelivery ?? ''} |`,
      ),
      '',
      `Round-by-round ratios, req/s: ${Object.entries(f.http.pairedRatios?.rps ?? {})
        .filter(([, value]) => value !== null)
        .map(([k, value]) => `\`${k}\` ${value}`)
        .join(', ')}; server CPU per request: ${Object.entries(f.http.pairedRatios?.serverCpuPerRequest ?? {})
        .filter(([, value]) => value !== null)
        .map(([k, value]) => `\`${k}\` ${value}`)
        .join(', ')}.`,
      '',
    );
  }
  if (f.instructions) {
    const c = s.instructions;
    out.push(
      `Inline memory path, instructions per delivery (bench/callgrind.js, ${c.date}; ${c.config.warmup.toLocaleString('en')} uninstrumented warm-up + ${c.config.deliveries.toLocaleString('en')} counted deliveries, fair scheduling, fake clock; \`before\` = 599366d):`,
      '',
      '| adapter | ours | before | ours / before | GC ours | GC before |',
      '|---|---:|---:|---:|---:|---:|',
      ...Object.entries(f.instructions).map(
        ([adapter, i]) =>
          `| ${adapter} | ${num(i.ours)} | ${num(i.before)} | ${x(i.ratio)} | ${num(i.gcOurs)} | ${num(i.gcBefore)} |`,
      ),
      '',
    );
  }
  if (f.memory) {
    const m = s.memory;
    out.push(
      `Memory store (bench/memory.bench.js --compare, ${m.date}; ${m.config.rounds} rounds, medians): the real dispatcher leaves **${f.memory.oursBytesPerHandledDelivery} bytes** of heap per handled delivery, 599366d's **${f.memory.beforeBytesPerHandledDelivery}** (two keys); the store alone ${f.memory.oursStoreBytesPerRun} bytes per record (599366d: ${f.memory.beforeStoreBytesPerKey} per key).`,
      '',
    );
  }
  out.push(
    `Keys: \`commandsPerDelivery.redis\` ${x(results.commandsPerDelivery?.redis)}, \`commandsPerDelivery.redisCluster\` ${x(results.commandsPerDelivery?.redisCluster)}, \`statementsPerDelivery.postgres\` ${x(results.statementsPerDelivery?.postgres)}, \`statementsPerDelivery.inbox\` ${x(results.statementsPerDelivery?.inbox)}; every figure above under \`issue40\`.`,
    '',
  );
  return out.join('\n');
}
