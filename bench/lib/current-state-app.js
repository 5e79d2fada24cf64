/**
 * The app process of bench/current-state.bench.js: our receiver (lib/ours-app.js, Express or Fastify,
 * inline, memory store, the no-op handler on `payment_intent.succeeded`), its client pointed at the
 * parent's PaymentsSimulator, listening on 127.0.0.1. Options: BENCH_CURRENT_STATE_OPTIONS (JSON)
 *   { adapter, lib, baseUrl, apiKey, current, reconcile }
 * Protocol (IPC):
 *   child  -> { type: 'ready', port }
 *   parent -> { type: 'cpu' }                 child -> { type: 'cpu', cpuUs, handlerRuns }
 *   parent -> { type: 'retrieve', ids }       the app's own client retrieves each intent in turn (the
 *             retrieve of current-state handling, alone): child -> { type: 'retrieved', cpuUs, wallUs, n }
 *   parent -> { type: 'close' }               child closes the app and exits
 */
import { createOursApp } from './ours-app.js';
import { handlerCounter } from './scenario-ipc.js';

const options = JSON.parse(process.env.BENCH_CURRENT_STATE_OPTIONS ?? '{}');
const { app } = await createOursApp(options);
await app.listen(0, '127.0.0.1');
const port = app.getHttpServer().address().port;
const { PaymentsService } = await import(options.lib);
const payments = app.get(PaymentsService);
const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

process.on('message', async (message) => {
  if (message?.type === 'cpu') process.send({ type: 'cpu', cpuUs: cpuUs(), handlerRuns: handlerCounter.runs });
  if (message?.type === 'retrieve') {
    const cpu0 = cpuUs();
    const t0 = performance.now();
    for (const id of message.ids) await payments.paymentIntents.retrieve(id);
    const wallUs = (performance.now() - t0) * 1000;
    process.send({ type: 'retrieved', cpuUs: cpuUs() - cpu0, wallUs, n: message.ids.length });
  }
  if (message?.type === 'close') {
    await app.close();
    process.exit(0);
  }
});
process.send({ type: 'ready', port });
