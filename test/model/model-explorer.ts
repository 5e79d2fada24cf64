import { drain, Scheduler, type Bounds, type Choice } from './model-scheduler.js';
import { World, LEASE_MS, type Scenario, type Violation } from './model-world.js';

/** What an exploration found. */
export interface Exploration {
  /** Runs started (replays of a choice prefix). */
  runs: number;
  /** Distinct states met at decision points. */
  states: number;
  /** Runs followed to their end (the epilogue and the invariants). */
  completed: number;
  /** The first violation, with the trace of the run that reached it. */
  violation?: { violation: Violation; trace: string[]; choices: number[] };
}

/** The scheduler whose virtual timers the global timer functions use now (none: the real ones). */
let current: ReturnType<Scheduler['timerApi']> | undefined;
const real = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
};
/*
 * Installed once, delegating to the run's scheduler: a function assigned to the global per run would
 * be kept by the test runner's record of globals (and every run's world with it).
 */
Object.assign(globalThis, {
  setTimeout: (fn: () => void, ms?: number) => (current ? current.setTimeout(fn, ms) : real.setTimeout(fn, ms)),
  setInterval: (fn: () => void, ms?: number) => (current ? current.setInterval(fn, ms) : real.setInterval(fn, ms)),
  clearTimeout: (handle: unknown) =>
    current ? current.clearTimeout(handle) : real.clearTimeout(handle as ReturnType<typeof setTimeout>),
  clearInterval: (handle: unknown) =>
    current ? current.clearInterval(handle) : real.clearInterval(handle as ReturnType<typeof setInterval>),
});

/** Points the global timers at `sched`'s virtual ones for one run; answers the function that stops it. */
function installTimers(sched: Scheduler): () => void {
  current = sched.timerApi();
  return () => {
    current = undefined;
  };
}

/**
 * Every interleaving of the scenario's steps, with at most `bounds.faults` faults and `bounds.lapses`
 * clock jumps per run: a depth-first walk over the choices, each run replayed from a fresh world (the
 * production code is deterministic given the answers of its steps). A state met before (same records,
 * watch list, pending steps, timers, effects and actor histories) is not explored twice.
 */
export async function explore(scenario: Scenario, bounds: Bounds, maxRuns = 200_000): Promise<Exploration> {
  const seen = new Set<string>();
  const stack: number[][] = [[]];
  const result: Exploration = { runs: 0, states: 0, completed: 0 };
  while (stack.length > 0) {
    if (result.runs >= maxRuns) throw new Error(`${scenario.name}: more than ${maxRuns} runs; tighten the bounds`);
    const prefix = stack.pop()!;
    result.runs++;
    if (process.env.MODEL_PROGRESS && result.runs % 5000 === 0) {
      (globalThis as { gc?: () => void }).gc?.();

      console.log(
        `${result.runs} runs, ${result.states} states, stack ${stack.length}, depth ${prefix.length}, heap ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MB`,
      );
    }
    const sched = new Scheduler(bounds, LEASE_MS);
    const world = new World(scenario, sched);
    const restore = installTimers(sched);
    const taken: number[] = [];
    let pruned = false;
    try {
      world.start();
      await drain();
      for (;;) {
        const choices = sched.choices();
        if (choices.length === 0 || world.violations.length > 0) break;
        if (taken.length >= prefix.length) {
          const key = world.key();
          if (seen.has(key)) {
            pruned = true;
            break;
          }
          seen.add(key);
          result.states++;
          // The alternatives of this point, explored later (the first is taken now).
          for (let alt = choices.length - 1; alt >= 1; alt--) stack.push([...taken, alt]);
        }
        const index = taken.length < prefix.length ? prefix[taken.length]! : 0;
        taken.push(index);
        await sched.run(choices[index]!, () => world.lapsed());
      }
      if (!pruned && world.violations.length === 0) {
        result.completed++;
        const runPending = async () => {
          for (let guard = 0; guard < 200; guard++) {
            const step = [...sched.pending].sort((a, b) => (a.id < b.id ? -1 : 1))[0];
            if (step === undefined) return;
            await sched.run({ step, outcome: 'ok' } as Choice, () => world.lapsed());
          }
          world.violate('no end', 'the system kept making steps after 200 in the epilogue');
        };
        const lapse = async () => {
          sched.lapses = -1_000; // the epilogue's time is not bounded
          await sched.run({ lapse: true }, () => undefined);
        };
        await world.epilogue(runPending, lapse);
      }
    } finally {
      restore();
    }
    if (world.violations.length > 0) {
      result.violation = { violation: world.violations[0]!, trace: sched.trace, choices: taken };
      return result;
    }
  }
  return result;
}
