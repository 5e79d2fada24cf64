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
  /** Claims granted: token -> the process it went to (`heard` false when its answer was lost). */
  readonly granted = new Map<string, { proc: number; heard: boolean }>();
  /** Tokens whose owner sent a completion or a release. */
  readonly ended = new Set<string>();
  /**
   * Connections stalled until a time (a process paused, or cut off from the engine): their calls land
   * only then, when what they say may be stale (another process took a lapsed lease meanwhile).
   */
  readonly stalledUntil = new WeakMap<() => boolean, number>();
  /** Told when a call broke the engine's own rules (a token acting on a run it does not own). */
  broke: (detail: string) => void = () => undefined;

  /** The owner token of a run now (undefined: nobody's). */
  ownerOf(key: string, slot: string): string | undefined {
    return this.records.snapshot()[key]?.runs[slot]?.owner;
  }

  /** Applies `change` to a run owned by `token`; another owner's run must come out of it unchanged. */
  asOwner(key: string, slot: string, token: string, what: string, change: () => void): void {
    const before = this.ownerOf(key, slot);
    change();
    if (before !== undefined && before !== token && this.ownerOf(key, slot) !== before) {
      this.broke(`a ${what} with the token of an earlier run changed ${key} ${slot}, another run's`);
    }
  }
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

  /**
   * One call of a process: some latency, perhaps a fault, never settled once `alive()` says no.
   * `unheard` is told the value of a call that applied but whose answer was lost.
   */
  call<T>(
    alive: () => boolean,
    what: string,
    apply: () => T,
    unheard?: (value: T) => void,
    heard?: (value: T) => void,
  ): Promise<T> {
    if (!alive()) return new Promise<T>(() => undefined);
    const draw = this.random.next();
    const fault =
      draw < this.faults.failBefore
        ? 'before'
        : draw < this.faults.failBefore + this.faults.failAfter
          ? 'after'
          : undefined;
    const delay = this.random.int(0, 4) + Math.max(0, (this.stalledUntil.get(alive) ?? 0) - Date.now());
    return new Promise<T>((resolve, reject) => {
      setTimeout(() => {
        if (!alive()) return;
        if (fault === 'before') return reject(new Error(`sim store: ${what} timed out`));
        const value = apply();
        if (fault === 'after') {
          unheard?.(value);
          return reject(new Error(`sim store: ${what} applied, reply lost`));
        }
        heard?.(value);
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
    private readonly proc = -1,
    /** Who hears of the claims granted now (asked when a claim is sent: the dispatch making it). */
    private readonly claimant: () => ((token: string, slot: string) => void) | undefined = () => undefined,
  ) {}

  claim(key: string, request: RunClaimRequest): Promise<IdempotencyClaim> {
    const heardBy = this.claimant();
    return this.engine.call(
      this.alive,
      'claim',
      () => {
        const claim = this.engine.records.claim(key, request) as IdempotencyClaim;
        if (claim.status === 'claimed') this.engine.granted.set(claim.token, { proc: this.proc, heard: true });
        return claim;
      },
      (claim) => {
        // Granted, but nobody heard it: its lease just lapses.
        if (claim.status === 'claimed') this.engine.granted.set(claim.token, { proc: this.proc, heard: false });
      },
      (claim) => {
        if (claim.status === 'claimed') heardBy?.(claim.token, request.slot);
      },
    );
  }
  complete(key: string, completion: RunCompletion): Promise<void> {
    this.engine.ended.add(completion.token);
    return this.engine
      .call(this.alive, 'complete', () =>
        this.engine.asOwner(key, completion.slot, completion.token, 'completion', () =>
          this.engine.records.complete(key, completion),
        ),
      )
      .catch((error: unknown) => {
        this.lostCompletion(key, completion);
        throw error;
      });
  }
  release(key: string, release: RunRelease): Promise<void> {
    this.engine.ended.add(release.token);
    return this.engine.call(this.alive, 'release', () =>
      this.engine.asOwner(key, release.slot, release.token, 'release', () => this.engine.records.release(key, release)),
    );
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
