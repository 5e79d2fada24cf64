/*
 * The scheduler of the protocol's model check: it owns every await of the system under test. Each store
 * call, handler run, retrieve and timer becomes a pending step; at each decision point the scheduler runs
 * one step with one outcome (ok, failing before applying, failing after applying, timing out: its effect
 * may land any time later or never), or lets the clock jump past every lease. Replaying a list of
 * choices from a fresh system gives the same run: the explorer (model-explorer.ts) enumerates them.
 */

/** How a step ends, for its caller. */
export type Outcome = 'ok' | 'failBefore' | 'failAfter' | 'timeout';

/** One pending step of an actor. */
export interface Step {
  /** Stable within a run: `<actor>.<kind>.<n>` (the actor's n-th step of that kind). */
  readonly id: string;
  readonly actor: string;
  readonly kind: string;
  /** What it is about, for the trace and the state key (canonical: no token or time inside). */
  readonly about: string;
  /** Whether a fault may hit it (store and database calls; a retrieve). */
  readonly faultable: boolean;
  /**
   * Touches nothing another actor reads (a retrieve from the service, a BEGIN): where it falls among
   * the other steps changes nothing, so it runs at once, only its outcome chosen (partial-order reduction).
   */
  readonly local: boolean;
  /** Applies it (to the engine), answering its value; may throw (then it failed before applying). */
  apply(): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** A timer of the system, fired only when the clock jumps. */
interface Timer {
  readonly label: string;
  due: number;
  readonly every: number | undefined;
  readonly fn: () => void;
  readonly actor: string;
}

/** An alternative at a decision point. */
export type Choice = { step: Step; outcome: Outcome } | { lapse: true };

/** Limits of one exploration. */
export interface Bounds {
  /** Faults (failBefore, failAfter, timeout) per run. */
  faults: number;
  /** Clock jumps past every lease per run. */
  lapses: number;
}

const realSetImmediate = setImmediate;
/** Lets every microtask the last step caused run (nothing here waits on real I/O or real timers). */
export const drain = async (): Promise<void> => {
  await new Promise<void>((resolve) => realSetImmediate(resolve));
  await new Promise<void>((resolve) => realSetImmediate(resolve));
};

export class Scheduler {
  clock = 1_000_000;
  readonly pending: Step[] = [];
  /** Steps whose caller was told they timed out: applied later, or never. */
  readonly ghosts: Step[] = [];
  readonly trace: string[] = [];
  faults = 0;
  lapses = 0;
  /** Whose continuation runs now: steps and timers created now are that actor's. */
  actor = 'setup';
  /**
   * True while a step applies whose answer its caller never hears (it fails after applying, or lands
   * after its caller was told it timed out).
   */
  landingLate = false;
  private readonly counters = new Map<string, number>();
  private timers: Timer[] = [];

  constructor(
    readonly bounds: Bounds,
    readonly leaseMs: number,
  ) {}

  /** A pending step of the current actor; its promise settles when the scheduler runs it. */
  step<T>(kind: string, about: string, faultable: boolean, apply: () => T, local = false): Promise<T> {
    const actor = this.actor;
    const n = (this.counters.get(`${actor}.${kind}`) ?? 0) + 1;
    this.counters.set(`${actor}.${kind}`, n);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        id: `${actor}.${kind}.${n}`,
        actor,
        kind,
        about,
        faultable,
        local,
        apply,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
    });
  }

  /** The alternatives now, in a fixed order. */
  choices(): Choice[] {
    const out: Choice[] = [];
    const local = this.pending.filter((step) => step.local).sort((a, b) => (a.id < b.id ? -1 : 1))[0];
    const steps = local ? [local] : [...this.pending, ...this.ghosts].sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const step of steps) {
      out.push({ step, outcome: 'ok' });
      if (step.faultable && !this.ghosts.includes(step) && this.faults < this.bounds.faults) {
        // A local step's late landing changes nothing anyone reads: failing before or after is enough.
        const outcomes = step.local ? (['failBefore'] as const) : (['failBefore', 'failAfter', 'timeout'] as const);
        for (const outcome of outcomes) out.push({ step, outcome });
      }
    }
    if (local) return out;
    if (this.lapses < this.bounds.lapses && (steps.length > 0 || this.timers.length > 0)) out.push({ lapse: true });
    return out;
  }

  /** Runs one alternative. */
  async run(choice: Choice, onLapse: () => void): Promise<void> {
    if ('lapse' in choice) {
      this.lapses++;
      this.clock += this.leaseMs + 1;
      this.trace.push(`-- the clock jumps ${this.leaseMs + 1} ms: every lease lapses`);
      onLapse();
      await this.fireDue();
      return;
    }
    const { step, outcome } = choice;
    const ghost = this.ghosts.indexOf(step);
    if (ghost >= 0) {
      this.ghosts.splice(ghost, 1);
      this.trace.push(`${step.id} ${step.about}: its effect lands late`);
      await this.as(step.actor, () => {
        this.landingLate = true;
        try {
          step.apply();
        } catch {
          // Applied with no caller listening.
        } finally {
          this.landingLate = false;
        }
      });
      return;
    }
    this.pending.splice(this.pending.indexOf(step), 1);
    if (outcome !== 'ok') this.faults++;
    if (outcome === 'failBefore') {
      this.trace.push(`${step.id} ${step.about}: fails before applying`);
      await this.as(step.actor, () => step.reject(new Error(`model: ${step.kind} failed before applying`)));
    } else if (outcome === 'timeout') {
      this.trace.push(`${step.id} ${step.about}: times out (may land later)`);
      this.ghosts.push(step);
      await this.as(step.actor, () => step.reject(new Error(`model: ${step.kind} timed out`)));
    } else {
      let value: unknown;
      let thrown: { error: unknown } | undefined;
      const before = this.actor;
      this.actor = step.actor;
      this.landingLate = outcome === 'failAfter';
      try {
        value = step.apply();
      } catch (error) {
        thrown = { error };
      } finally {
        this.actor = before;
        this.landingLate = false;
      }
      this.trace.push(
        `${step.id} ${step.about}: ${thrown ? `threw ${String(thrown.error)}` : outcome === 'failAfter' ? 'applied, the answer is lost' : describeValue(value)}`,
      );
      await this.as(step.actor, () => {
        if (thrown) step.reject(thrown.error);
        else if (outcome === 'failAfter') step.reject(new Error(`model: ${step.kind} applied, answer lost`));
        else step.resolve(value);
      });
    }
  }

  /** Fires every timer due now, in due order, each as its actor. */
  private async fireDue(): Promise<void> {
    const fired = new Set<string>();
    for (;;) {
      const next = this.timers
        .filter((timer) => timer.due <= this.clock && !fired.has(timer.label))
        .sort((a, b) => a.due - b.due || (a.label < b.label ? -1 : 1))[0];
      if (next === undefined) return;
      fired.add(next.label);
      if (next.every === undefined) this.timers.splice(this.timers.indexOf(next), 1);
      else next.due = this.clock + next.every;
      this.trace.push(`${next.label} fires`);
      await this.as(next.actor, next.fn);
    }
  }

  /**
   * Runs `fn` as `actor`, then every microtask it caused: only that actor's continuation runs (the
   * others wait on their pending steps), so what it starts is that actor's.
   */
  private async as(actor: string, fn: () => void): Promise<void> {
    const before = this.actor;
    this.actor = actor;
    try {
      fn();
      await drain();
    } finally {
      this.actor = before;
    }
  }

  /** Timer functions over the virtual clock, installed on globalThis for a run. */
  timerApi() {
    const add = (fn: () => void, ms: number | undefined, every: boolean) => {
      const n = (this.counters.get(`${this.actor}.timer`) ?? 0) + 1;
      this.counters.set(`${this.actor}.timer`, n);
      const label = `${this.actor}.timer.${n}`;
      const timer: Timer = {
        label,
        due: this.clock + Math.max(0, ms ?? 0),
        every: every ? Math.max(1, ms ?? 1) : undefined,
        fn,
        actor: this.actor,
      };
      this.timers.push(timer);
      const handle = { label, unref: () => handle, ref: () => handle, hasRef: () => false };
      return handle;
    };
    const clear = (handle: unknown) => {
      const label = (handle as { label?: string } | undefined)?.label;
      this.timers = this.timers.filter((timer) => timer.label !== label);
    };
    return {
      setTimeout: (fn: () => void, ms?: number) => add(fn, ms, false),
      setInterval: (fn: () => void, ms?: number) => add(fn, ms, true),
      clearTimeout: clear,
      clearInterval: clear,
    };
  }

  /** What the timers are, for the state key: due times relative to now, by actor. */
  timersKey(): string {
    return this.timers
      .map((timer) => `${timer.label}@${timer.due - this.clock}${timer.every === undefined ? '' : `/${timer.every}`}`)
      .sort()
      .join(',');
  }

  pendingKey(): string {
    return [
      ...this.pending.map((step) => `${step.id}:${step.about}`),
      ...this.ghosts.map((step) => `ghost ${step.id}:${step.about}`),
    ]
      .sort()
      .join(';');
  }
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'ok';
  if (typeof value === 'object' && value !== null && 'status' in value)
    return String((value as { status: string }).status);
  if (Array.isArray(value)) return `[${value.length}]`;
  return JSON.stringify(value);
}
