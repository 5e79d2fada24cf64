/**
 * Baseline scenario: the bare Nest route of lib/baseline-app.js, listening on 127.0.0.1. Options
 * (BENCH_SCENARIO_OPTIONS): { adapter: 'express' | 'fastify', logger, reply, inbox } (see lib/baseline-app.js).
 */
import { packageVersion } from '../lib/package-version.js';
import { baselineBenchHooks, createBaselineApp } from '../lib/baseline-app.js';
import { scenarioOptions, serveScenario } from '../lib/scenario-ipc.js';

const app = await createBaselineApp(scenarioOptions());
await app.listen(0, '127.0.0.1');

serveScenario({
  port: app.getHttpServer().address().port,
  nestVersion: packageVersion('@nestjs/core', import.meta.dirname),
  extra: baselineBenchHooks(app).extra,
  close: async () => {
    await app.close();
    for (const cleanup of baselineBenchHooks(app).cleanups) await cleanup();
  },
});
