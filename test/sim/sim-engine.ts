import { MemoryIdempotencyStore, type IdempotencyClaim, type IdempotencyStore } from '../../lib/index.js';
import type {
  IntentWatchStore,
  RunClaimRequest,
  RunCompletion,
  RunRelease,
  RunRenewal,
  WatchedIntent,
} from '../../lib/webhooks/index.js';
import type { SimRandom } from './sim-random.js';

/**
 * The shared engine of the simulation (what Redis is to the processes of one app): the records (one
 * per intent, one per event naming no intent) and one watch list per scope, kept in them, reached by each process through its own connection, whose
 * calls take time, can fail before or after they apply, and never settle once the process is dead.
 */
export interface SimFaults {
  /** Probability that a store call fails without applying (a timeout). */
  failBefore: number;
  /** Probability that it applies and then fails (the reply was lost). */
  failAfter: number;
}

/**
 * One watch list (and its sweeper lease) in the engine: the records' own list (what a
 * `RedisIntentWatchStore` keys under one tag), and what the invariants read of it.
 */
export class SimWatchList {
  /** Every id ever watched here (the liveness check's "was watched"). */
  readonly everWatched = new Set<string>();
  lease: { owner: string; until: number } | undefined;
  constructor(readonly records: IntentWatchStore) {}
  /** The intents watched now. */
  watched(): WatchedIntent[] {
    return this.records.list!() as WatchedIntent[];
  }
}

export class SimEngine {
  readonly records = new MemoryIdempotencyStore({ maxEntries: 1_000_000, now: () => Date.now() });
  readonly watchLists = new Map<string, SimWatchList>();
  faults: SimFaults = { failBefore: 0, failAfter: 0 };

  constructor(private readonly random: SimRandom) {}

  watchList(scope: string): SimWatchList {
    let list = this.watchLists.get(scope);
    if (!list) {
      list = new SimWatchList(this.records.intentWatchStore(scope === '' ? undefined : scope));
      this.watchLists.set(scope, list);
    }
    return list;
  }

  /** One call of a process: some latency, perhaps a fault, never settled once `alive()` says no. */
  call<T>(alive: () => boolean, what: string, apply: () => T): Promise<T> {
    if (!alive()) return new Promise<T>(() => undefined);
    const draw = this.random.next();
    const fault =
      draw < this.faults.failBefore
        ? 'before'
        : draw < this.faults.failBefore + this.faults.failAfter
          ? 'after'
          : undefined;
    const delay = this.random.int(0, 4);
    return new Promise<T>((resolve, reject) => {
      setTimeout(() => {
        if (!alive()) return;
        if (fault === 'before') return reject(new Error(`sim store: ${what} timed out`));
        const value = apply();
        if (fault === 'after') return reject(new Error(`sim store: ${what} applied, reply lost`));
        resolve(value);
      }, delay);
    });
  }
}

/** A process's idempotency store: the engine's records through this process's connection. */
export class SimIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly engine: SimEngine,
    private readonly alive: () => boolean,
    /** Told when a completion's answer is lost: its handler may legitimately run again once its lease lapses. */
    private readonly lostCompletion: (key: string, completion: RunCompletion) => void = () => undefined,
  ) {}

  claim(key: string, request: RunClaimRequest): Promise<IdempotencyClaim> {
    return this.engine.call(this.alive, 'claim', () => this.engine.records.claim(key, request) as IdempotencyClaim);
  }
  complete(key: string, completion: RunCompletion): Promise<void> {
    return this.engine
      .call(this.alive, 'complete', () => this.engine.records.complete(key, completion))
      .catch((error: unknown) => {
        this.lostCompletion(key, completion);
        throw error;
      });
  }
  release(key: string, release: RunRelease): Promise<void> {
    return this.engine.call(this.alive, 'release', () => this.engine.records.release(key, release));
  }
  renew(key: string, renewal: RunRenewal): Promise<boolean> {
    return this.engine.call(this.alive, 'renew', () => this.engine.records.renew(key, renewal));
  }
  /** As the built-in stores: one list per module instance, kept in the records, keyed by the name it is given. */
  intentWatchStore(instance?: string): IntentWatchStore {
    return new SimIntentWatchStore(this.engine, this.engine.watchList(instance ?? ''), this.alive);
  }
}

/** A process's view of one watch list: the records' list through its connection, and the sweeper lease. */
export class SimIntentWatchStore implements IntentWatchStore {
  readonly inRecords = true;
  constructor(
    private readonly engine: SimEngine,
    readonly shared: SimWatchList,
    private readonly alive: () => boolean,
  ) {}

  watch(intent: WatchedIntent): Promise<void> {
    return this.engine.call(this.alive, 'watch', () => {
      this.shared.records.watch(intent);
      this.shared.everWatched.add(intent.id);
    });
  }
  due(now: number, limit: number): Promise<WatchedIntent[]> {
    return this.engine.call(this.alive, 'due', () => this.shared.records.due(now, limit) as WatchedIntent[]);
  }
  reschedule(id: string, nextCheckAt: number, checks: number): Promise<void> {
    return this.engine.call(
      this.alive,
      'reschedule',
      () => void this.shared.records.reschedule(id, nextCheckAt, checks),
    );
  }
  forget(id: string): Promise<void> {
    return this.engine.call(this.alive, 'forget', () => void this.shared.records.forget(id));
  }
  lease(owner: string, ms: number): Promise<boolean> {
    return this.engine.call(this.alive, 'lease', () => {
      const now = Date.now();
      const held = this.shared.lease;
      if (held && held.owner !== owner && held.until > now) return false;
      this.shared.lease = { owner, until: now + ms };
      return true;
    });
  }
}
