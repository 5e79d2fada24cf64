/**
 * Our receiver (lib/ours-app.js: PaymentsModule, `hmacVerifier` on the baseline's scheme, a no-op
 * handler), listening on 127.0.0.1. Loads the compiled library from dist-sample/lib (npm run bench
 * compiles it first). Options (BENCH_SCENARIO_OPTIONS): see lib/ours-app.js. Keys and jobs of a Redis
 * scenario are removed when the parent closes it.
 */
import { packageVersion } from '../lib/package-version.js';
import { createOursApp } from '../lib/ours-app.js';
import { scenarioOptions, serveScenario } from '../lib/scenario-ipc.js';

const { app, extra, cleanups } = await createOursApp(scenarioOptions());
await app.listen(0, '127.0.0.1');

serveScenario({
  port: app.getHttpServer().address().port,
  nestVersion: packageVersion('@nestjs/core', import.meta.dirname),
  extra,
  close: async () => {
    await app.close();
    for (const cleanup of cleanups) await cleanup();
  },
});
