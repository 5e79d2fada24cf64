/**
 * A small round-robin HTTP proxy (node:http, one keep-alive agent per target) for the instances runs
 * of bench/scale.bench.js, in its own process. Options (BENCH_SCENARIO_OPTIONS): { targets: [port...] }.
 * Speaks the scenario protocol: 'ready' with its port, 'mark' resets its counters, 'report' gives
 * per-target forwarded requests (extra.forwarded) and proxy errors (extra.proxyErrors).
 */
import http from 'node:http';
import { scenarioOptions, serveScenario } from './scenario-ipc.js';

const { targets } = scenarioOptions();
const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 }));
let forwarded = targets.map(() => 0);
let proxyErrors = 0;
let next = 0;

const server = http.createServer((req, res) => {
  const index = next;
  next = (next + 1) % targets.length;
  forwarded[index]++;
  const upstream = http.request(
    {
      host: '127.0.0.1',
      port: targets[index],
      method: req.method,
      path: req.url,
      headers: req.headers,
      agent: agents[index],
    },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    proxyErrors++;
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  serveScenario({
    port: server.address().port,
    nestVersion: 'n/a',
    onMark: () => {
      forwarded = targets.map(() => 0);
      proxyErrors = 0;
    },
    extra: () => ({ forwarded, proxyErrors }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      for (const agent of agents) agent.destroy();
    },
  });
});
