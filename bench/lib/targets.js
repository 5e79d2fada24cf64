/**
 * The targets of issue 15, as checks over `latest.json` (and `instructions.json` for the instruction
 * counts). Each returns { value, target, pass } where `pass` is null when the figure is missing (a
 * scenario that could not run). CPU time per request is the figure; req/s the cross-check.
 */
const cpu = (r) => r.cpuPerRequest ?? {};
const margin = (a, b) => (a == null || b == null ? null : Math.round((a - b) * 1000) / 1000);

export const TARGETS = [
  {
    id: 'cpuExpress',
    text: 'ours (Express) CPU per request <= 1.10 x the bare route, production log levels',
    get: (r) => cpu(r).expressVsBaseline,
    test: (v) => v <= 1.1,
  },
  {
    id: 'cpuFastify',
    text: 'ours (Fastify) CPU per request <= 1.10 x the bare route, production log levels',
    get: (r) => cpu(r).fastifyVsBaseline,
    test: (v) => v <= 1.1,
  },
  {
    id: 'cpuExpressDefaultLogs',
    text: "ours (Express) CPU per request <= 1.15 x the bare route, Nest's default log levels",
    get: (r) => cpu(r).expressDefaultLogsVsBaseline,
    test: (v) => v <= 1.15,
  },
  {
    id: 'cpuFastifyDefaultLogs',
    text: "ours (Fastify) CPU per request <= 1.15 x the bare route, Nest's default log levels",
    get: (r) => cpu(r).fastifyDefaultLogsVsBaseline,
    test: (v) => v <= 1.15,
  },
  {
    id: 'instructionsExpress',
    text: 'ours (Express) instructions per delivery <= 1.10 x the bare route (callgrind)',
    get: (_r, i) => i?.ratios?.expressVsBaseline?.ratio,
    test: (v) => v <= 1.1,
  },
  {
    id: 'instructionsFastify',
    text: 'ours (Fastify) instructions per delivery <= 1.10 x the bare route (callgrind)',
    get: (_r, i) => i?.ratios?.fastifyVsBaseline?.ratio,
    test: (v) => v <= 1.1,
  },
  {
    id: 'instructionsFastifyVsPlainFastify',
    text: 'ours on Nest + Fastify <= 1.5 x a plain Fastify route, instructions net of the injection (callgrind; issue 22)',
    get: (_r, i) => i?.ratios?.fastifyVsPlainFastify?.netOfHarness,
    test: (v) => v <= 1.5,
  },
  {
    id: 'instructionsFastifyDefaultLogs',
    text: "ours (Fastify) instructions per delivery <= 1.15 x the bare route at Nest's default levels (callgrind)",
    get: (_r, i) => i?.ratios?.fastifyDefaultLogsVsBaseline?.ratio,
    test: (v) => v <= 1.15,
  },
  {
    id: 'expressVsPeerOverhead',
    text: "ours (Express) req/s ratio to its baseline >= the peer's ratio to its own (margin)",
    get: (r) => margin(r.ratios.expressVsBaseline, r.ratios.peerVsItsBaseline),
    test: (v) => v >= 0,
    unit: 'margin',
  },
  {
    id: 'fastifyVsPeer',
    text: 'ours on Fastify >= 3 x the peer req/s',
    get: (r) => r.ratios.fastifyVsPeer,
    test: (v) => v >= 3,
  },
  {
    id: 'p99VsBaseline',
    text: 'ours (Express, memory) p99 <= 1.25 x baseline p99',
    get: (r) => r.ratios.p99VsBaseline,
    test: (v) => v <= 1.25,
  },
  {
    id: 'redisVsMemory',
    text: 'Redis store (single node) >= 0.9 x memory store req/s (issue 22)',
    get: (r) => r.ratios.redisVsMemory,
    test: (v) => v >= 0.9,
  },
  {
    id: 'redisClusterVsMemory',
    text: 'Redis store on the 3-master Cluster >= 0.9 x memory store req/s (issue 22)',
    get: (r) => r.ratios.redisClusterVsMemory,
    test: (v) => v >= 0.9,
  },
  {
    id: 'postgresVsMemory',
    text: 'PostgreSQL store >= 0.7 x memory store req/s (issue 22)',
    get: (r) => r.ratios.postgresVsMemory,
    test: (v) => v >= 0.7,
  },
  {
    id: 'inboxVsMemory',
    text: 'transactional inbox (PostgreSQL) >= 0.6 x memory store req/s (issue 22)',
    get: (r) => r.ratios.inboxVsMemory,
    test: (v) => v >= 0.6,
  },
  {
    id: 'retained100kMB',
    text: '100k retained events <= 25 MB of heap',
    get: (r) => r.memory?.retained100kMB,
    test: (v) => v <= 25,
  },
  {
    id: 'clientVsAxios',
    text: 'client wall time <= 1.10 x raw keep-alive axios (worse of sequential, concurrent)',
    get: (r) => r.ratios.clientVsAxios,
    test: (v) => v <= 1.1,
  },
  {
    id: 'clientSequentialSockets',
    text: 'one socket reused for sequential calls',
    get: (r) => r.client?.sequential?.oursSockets ?? null,
    test: (v) => v === 1,
  },
];

/** Evaluates every target against a results object (and the instruction counts, when given). */
export function evaluateTargets(results, instructions) {
  return TARGETS.map((t) => {
    let value;
    try {
      value = t.get(results, instructions) ?? null;
    } catch {
      value = null;
    }
    return { id: t.id, text: t.text, value, pass: value == null ? null : t.test(value) };
  });
}
