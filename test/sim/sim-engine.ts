import { MemoryIdempotencyStore, type IdempotencyClaim, type IdempotencyStore } from '../../lib/index.js';
import type { IntentWatchStore, WatchedIntent } from '../../lib/webhooks/index.js';
import type { SimRandom } from './sim-random.js';

/**
 * The shared engine of the simulation (what Redis is to the processes of one app): one idempotency
 * key space and one watch list per scope, reached by each process through its own connection, whose
 * calls take time, can fail before or after they apply, and never settle once the process is dead.
 */
export interface SimFaults {
  /** Probability that a store call fails without applying (a timeout). */
  failBefore: number;
  /** Probability that it applies and then fails (the reply was lost). */
  failAfter: number;
}

/** One watch list (and its sweeper lease) in the engine: what a `RedisIntentWatchStore` keys under one tag. */
export class SimWatchList {
  readonly intents = new Map<string, WatchedIntent>();
  /** Every id ever watched here (the liveness check's "was watched"). */
  readonly everWatched = new Set<string>();
  lease: { owner: string; until: number } | undefined;
}

export class SimEngine {
  readonly claims = new MemoryIdempotencyStore({ maxEntries: 1_000_000, now: () => Date.now() });
  readonly watchLists = new Map<string, SimWatchList>();
  faults: SimFaults = { failBefore: 0, failAfter: 0 };

  constructor(private readonly random: SimRandom) {}

  watchList(scope: string): SimWatchList {
    let list = this.watchLists.get(scope);
    if (!list) this.watchLists.set(scope, (list = new SimWatchList()));
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

/** A process's idempotency store: the engine's claims through this process's connection. */
export class SimIdempotencyStore implements IdempotencyStore {
  /** As `RedisIdempotencyStore` when set: the two claims of a run go out at once (half the processes). */
  readonly concurrentClaims: boolean;

  constructor(
    private readonly engine: SimEngine,
    private readonly alive: () => boolean,
    private readonly onComplete: (key: string) => void = () => undefined,
    concurrentClaims = false,
  ) {
    this.concurrentClaims = concurrentClaims;
  }

  claim(key: string, leaseMs: number): Promise<IdempotencyClaim> {
    return this.engine.call(this.alive, 'claim', () => this.engine.claims.claim(key, leaseMs) as IdempotencyClaim);
  }
  complete(key: string, token: string, retentionMs: number): Promise<void> {
    return this.engine.call(this.alive, 'complete', () => {
      this.engine.claims.complete(key, token, retentionMs);
      this.onComplete(key);
    });
  }
  release(key: string, token: string): Promise<void> {
    return this.engine.call(this.alive, 'release', () => void this.engine.claims.release(key, token));
  }
  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.engine.call(this.alive, 'renew', () => this.engine.claims.renew(key, token, leaseMs) as boolean);
  }
  /** As `RedisIdempotencyStore`: one list per module instance, keyed by the name it is given. */
  intentWatchStore(instance?: string): IntentWatchStore {
    return new SimIntentWatchStore(this.engine, this.engine.watchList(instance ?? ''), this.alive);
  }
}

/** A process's view of one watch list, with `MemoryIntentWatchStore`'s semantics. */
export class SimIntentWatchStore implements IntentWatchStore {
  constructor(
    private readonly engine: SimEngine,
    readonly shared: SimWatchList,
    private readonly alive: () => boolean,
  ) {}

  watch(intent: WatchedIntent): Promise<void> {
    return this.engine.call(this.alive, 'watch', () => {
      if (!this.shared.intents.has(intent.id)) this.shared.intents.set(intent.id, { ...intent });
      this.shared.everWatched.add(intent.id);
    });
  }
  due(now: number, limit: number): Promise<WatchedIntent[]> {
    return this.engine.call(this.alive, 'due', () =>
      [...this.shared.intents.values()]
        .filter((intent) => intent.nextCheckAt <= now)
        // Never-checked intents first (the stores' second lane), then the rest, each in due order.
        .sort(
          (a, b) =>
            Number(a.checks > 0) - Number(b.checks > 0) || a.nextCheckAt - b.nextCheckAt || (a.id < b.id ? -1 : 1),
        )
        .slice(0, limit)
        .map((intent) => ({ ...intent })),
    );
  }
  reschedule(id: string, nextCheckAt: number, checks: number): Promise<void> {
    return this.engine.call(this.alive, 'reschedule', () => {
      const intent = this.shared.intents.get(id);
      if (intent) this.shared.intents.set(id, { ...intent, nextCheckAt, checks });
    });
  }
  forget(id: string): Promise<void> {
    return this.engine.call(this.alive, 'forget', () => void this.shared.intents.delete(id));
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
