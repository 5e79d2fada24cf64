/**
 * The child side of the scenario protocol. A scenario server calls `serveScenario` once it listens;
 * the parent (bench/run.js) then drives it over the IPC channel:
 *   child  -> { type: 'ready', port, nestVersion }
 *   parent -> { type: 'mark' }    child resets its counters and CPU clock  -> { type: 'marked' }
 *   parent -> { type: 'report' }  child -> { type: 'report', handlerRuns, cpuMs, wallMs, heapUsedMB, rssMB, extra }
 *   parent -> { type: 'close' }   child closes the app, cleans up, exits 0
 * A child started with no IPC channel (by hand) just prints its port.
 */

/** Counter the scenario's no-op handler bumps, so the parent can check every request ran it. */
export const handlerCounter = { runs: 0 };

/**
 * @param {{ port: number, nestVersion: string, close: () => Promise<void>, onMark?: () => void, extra?: () => Promise<object> | object }} scenario
 */
export function serveScenario(scenario) {
  let cpuAtMark = process.cpuUsage();
  let wallAtMark = performance.now();
  if (!process.send) {
    console.log(`listening on http://127.0.0.1:${scenario.port} (Nest ${scenario.nestVersion})`);
    return;
  }
  process.on('message', async (message) => {
    if (message?.type === 'mark') {
      handlerCounter.runs = 0;
      scenario.onMark?.();
      cpuAtMark = process.cpuUsage();
      wallAtMark = performance.now();
      process.send({ type: 'marked' });
    } else if (message?.type === 'report') {
      const cpu = process.cpuUsage(cpuAtMark);
      const memory = process.memoryUsage();
      process.send({
        type: 'report',
        handlerRuns: handlerCounter.runs,
        cpuMs: (cpu.user + cpu.system) / 1000,
        wallMs: performance.now() - wallAtMark,
        heapUsedMB: memory.heapUsed / 2 ** 20,
        rssMB: memory.rss / 2 ** 20,
        extra: scenario.extra ? await scenario.extra() : undefined,
      });
    } else if (message?.type === 'close') {
      try {
        await scenario.close();
      } finally {
        process.exit(0);
      }
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready', port: scenario.port, nestVersion: scenario.nestVersion });
}

/** Reads `BENCH_SCENARIO_OPTIONS` (JSON) given by the parent. */
export function scenarioOptions() {
  return JSON.parse(process.env.BENCH_SCENARIO_OPTIONS ?? '{}');
}
