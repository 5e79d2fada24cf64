/**
 * The targets of issue 6, as checks over `latest.json`. Each returns { value, target, pass } where
 * `pass` is null when the figure is missing (a scenario that could not run).
 */
export const TARGETS = [
  { id: 'expressVsBaseline', text: 'ours (Express, memory) >= 0.90 x baseline req/s', get: (r) => r.ratios.expressVsBaseline, test: (v) => v >= 0.9 },
  { id: 'p99VsBaseline', text: 'ours (Express, memory) p99 <= 1.25 x baseline p99', get: (r) => r.ratios.p99VsBaseline, test: (v) => v <= 1.25 },
  { id: 'fastifyVsBaseline', text: 'ours on Fastify >= 0.85 x Fastify baseline req/s', get: (r) => r.ratios.fastifyVsBaseline, test: (v) => v >= 0.85 },
  { id: 'fastifyVsPeer', text: 'ours on Fastify >= 3 x the peer req/s', get: (r) => r.ratios.fastifyVsPeer, test: (v) => v >= 3 },
  {
    id: 'expressVsPeerOverhead',
    text: "ours (Express) ratio to baseline >= the peer's ratio to its baseline - 0.05",
    get: (r) => (r.ratios.expressVsBaseline == null || r.ratios.peerVsItsBaseline == null ? null : Math.round((r.ratios.expressVsBaseline - (r.ratios.peerVsItsBaseline - 0.05)) * 1000) / 1000),
    test: (v) => v >= 0,
    unit: 'margin',
  },
  { id: 'redisVsMemory', text: 'Redis store >= 0.6 x memory store req/s', get: (r) => r.ratios.redisVsMemory, test: (v) => v >= 0.6 },
  { id: 'retained100kMB', text: '100k retained events <= 25 MB of heap', get: (r) => r.memory.retained100kMB, test: (v) => v <= 25 },
  { id: 'clientVsAxios', text: 'client wall time <= 1.10 x raw keep-alive axios (worse of sequential, concurrent)', get: (r) => r.ratios.clientVsAxios, test: (v) => v <= 1.1 },
  { id: 'clientSequentialSockets', text: 'one socket reused for sequential calls', get: (r) => r.client?.sequential?.oursSockets ?? null, test: (v) => v === 1 },
];

/** Evaluates every target against a results object. */
export function evaluateTargets(results) {
  return TARGETS.map((t) => {
    let value;
    try {
      value = t.get(results) ?? null;
    } catch {
      value = null;
    }
    return { id: t.id, text: t.text, value, pass: value == null ? null : t.test(value) };
  });
}
