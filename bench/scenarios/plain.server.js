/**
 * The physical limits as HTTP scenarios (issue 22): no Nest, no library. Options
 * (BENCH_SCENARIO_OPTIONS): { kind: 'node' } (a node:http request handler) or { kind: 'fastify' } (a
 * plain Fastify app). Both read the body, verify the same HMAC in constant time, parse the JSON, drop
 * an id seen before (a Map) and answer 200 (lib/plain-anchors.js, the same code callgrind counts).
 */
import http from 'node:http';
import { createPlainFastifyApp, createPlainNodeHandler } from '../lib/plain-anchors.js';
import { packageVersion } from '../lib/package-version.js';
import { scenarioOptions, serveScenario } from '../lib/scenario-ipc.js';

const { kind } = scenarioOptions();
const nestVersion = packageVersion('@nestjs/core', import.meta.dirname);

if (kind === 'fastify') {
  const app = await createPlainFastifyApp();
  await app.listen({ port: 0, host: '127.0.0.1' });
  serveScenario({ port: app.server.address().port, nestVersion, close: () => app.close() });
} else {
  const server = http.createServer(createPlainNodeHandler());
  server.keepAliveTimeout = 5_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  serveScenario({
    port: server.address().port,
    nestVersion,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  });
}
