/**
 * The client's side of the instruction count (issue 31, item 3), run by bench/callgrind.js under
 * `valgrind --tool=callgrind`: one client (`ours`: PaymentsService.paymentIntents.retrieve in a Nest
 * application context; `axios`: raw axios with a keep-alive agent and the same headers, what one writes
 * by hand) makes `warmup` then `calls` GETs to the stand-in API (scenarios/intent-api.server.js, another
 * process that callgrind does not count), `concurrency` at a time, and checks every answer. The measured
 * calls are marked for callgrind as in instructions-driver.js: `os.hostname()` before, `os.homedir()` after.
 * Options: BENCH_CLIENT_OPTIONS (JSON) { client, baseUrl, warmup, calls, concurrency, lib }.
 */
import 'reflect-metadata';
import { Agent } from 'node:http';
import { homedir, hostname } from 'node:os';
import axios from 'axios';

const options = JSON.parse(process.env.BENCH_CLIENT_OPTIONS ?? '{}');
const { client: kind = 'ours', baseUrl, warmup = 300, calls = 1000, concurrency = 1 } = options;
const lib = options.lib ?? new URL('../../dist-sample/lib/index.js', import.meta.url).href;
const API_KEY = 'bench-api-key-not-a-real-one';
// Fixed ids (no randomUUID: the same requests in every run).
const ids = Array.from({ length: 64 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

/** Our client, in a Nest application context as an app has it. */
async function oursClient() {
  const { Module } = await import('@nestjs/common');
  const { NestFactory } = await import('@nestjs/core');
  const { PaymentsModule, PaymentsService } = await import(lib);
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
            // valgrind runs Node 20-50x slower: no per-attempt timeout may fire while counting.
            http: { timeoutMs: 600_000 },
            ...(options.clientOptions ?? {}),
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
function axiosClient() {
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

const client = kind === 'axios' ? axiosClient() : await oursClient();

async function run(from, to) {
  let next = from;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      const intent = await client.retrieve(ids[i % ids.length]);
      if (intent?.id !== ids[i % ids.length]) throw new Error(`call ${i}: unexpected answer`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

await run(0, warmup);
hostname(); // callgrind: zero the counters
await run(warmup, warmup + calls);
homedir(); // callgrind: dump the counters
process.stderr.write(`${JSON.stringify({ type: 'instructions-driver', sent: warmup + calls, measured: calls })}\n`);
await client.close();
