/**
 * Client benchmark (run as a child by bench/run.js, or by hand: node bench/client.bench.js [--quick]):
 * `PaymentsService.paymentIntents.retrieve(id)` against a local node:http server (its own process)
 * vs raw axios with a keep-alive agent doing the same GET with the same headers. For each round,
 * each client (a fresh instance per phase, built outside the clock) makes N calls sequentially, then
 * N at concurrency 32; the order of the two clients alternates between rounds. Reports wall times,
 * their medians and ratios, and the sockets the server accepted per phase.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import axios from 'axios';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { ScenarioProcess, removeScenarioLogs } from './lib/scenario-process.js';
import { median, ratio, round } from './lib/stats.js';
import { PaymentsModule, PaymentsService } from '../dist-sample/lib/index.js';

const quick = process.argv.includes('--quick');
const CALLS = quick ? 300 : 2000;
const CONCURRENCY = 32;
const ROUNDS = quick ? 1 : 5;
const WARMUP_CALLS = quick ? 200 : 1000;
const API_KEY = 'bench-api-key-not-a-real-one';
const ids = Array.from({ length: 64 }, () => randomUUID());

/** Our client, in a Nest application context as an app has it. */
async function oursClient(baseUrl) {
  class ClientBenchModule {}
  Reflect.decorate(
    [
      Module({
        imports: [
          PaymentsModule.forRoot({
            apiKey: API_KEY,
            environment: 'sandbox',
            baseUrl,
            allowInsecureHttp: true,
            webhooks: false,
          }),
        ],
      }),
    ],
    ClientBenchModule,
  );
  const app = await NestFactory.createApplicationContext(ClientBenchModule, { logger: false });
  const payments = app.get(PaymentsService);
  return { retrieve: (id) => payments.paymentIntents.retrieve(id), close: () => app.close() };
}

/** Raw axios with a keep-alive agent: what one would write by hand. */
async function axiosClient(baseUrl) {
  const httpAgent = new Agent({ keepAlive: true });
  const client = axios.create({
    baseURL: baseUrl,
    httpAgent,
    headers: { 'X-Api-Key': API_KEY, 'X-Api-Version': '1', Accept: 'application/json' },
  });
  return {
    retrieve: async (id) => (await client.get(`/payment_intents/${id}`)).data,
    close: async () => httpAgent.destroy(),
  };
}

const CLIENTS = { ours: oursClient, axios: axiosClient };

async function runCalls(client, calls, concurrency) {
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      const i = next++;
      const intent = await client.retrieve(ids[i % ids.length]);
      if (intent?.id !== ids[i % ids.length]) throw new Error(`call ${i}: unexpected answer`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function phase(server, baseUrl, name, calls, concurrency) {
  const client = await CLIENTS[name](baseUrl);
  await server.mark();
  const started = performance.now();
  await runCalls(client, calls, concurrency);
  const wallMs = performance.now() - started;
  const report = await server.report();
  await client.close();
  return { wallMs, sockets: report.extra.connections, requests: report.handlerRuns };
}

const server = await ScenarioProcess.start({
  file: new URL('./scenarios/intent-api.server.js', import.meta.url).pathname,
});
const baseUrl = `http://127.0.0.1:${server.port}`;
try {
  for (const name of Object.keys(CLIENTS)) await phase(server, baseUrl, name, WARMUP_CALLS, 8);
  const raw = { sequential: { ours: [], axios: [] }, concurrent: { ours: [], axios: [] } };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ['ours', 'axios'] : ['axios', 'ours'];
    for (const name of order) raw.sequential[name].push(await phase(server, baseUrl, name, CALLS, 1));
    for (const name of order) raw.concurrent[name].push(await phase(server, baseUrl, name, CALLS, CONCURRENCY));
  }
  const summary = {};
  for (const mode of ['sequential', 'concurrent']) {
    const ours = median(raw[mode].ours.map((p) => p.wallMs));
    const ax = median(raw[mode].axios.map((p) => p.wallMs));
    summary[mode] = {
      calls: CALLS,
      concurrency: mode === 'sequential' ? 1 : CONCURRENCY,
      oursWallMs: round(ours, 1),
      axiosWallMs: round(ax, 1),
      oursVsAxios: ratio(ours, ax),
      oursSockets: Math.max(...raw[mode].ours.map((p) => p.sockets)),
      axiosSockets: Math.max(...raw[mode].axios.map((p) => p.sockets)),
      perRound: raw[mode],
    };
  }
  const result = {
    rounds: ROUNDS,
    ...summary,
    clientVsAxios: Math.max(summary.sequential.oursVsAxios, summary.concurrent.oursVsAxios),
  };
  if (process.send) process.send({ type: 'client-result', result });
  else console.log(JSON.stringify(result, null, 2));
} finally {
  await server.close();
  removeScenarioLogs();
}
