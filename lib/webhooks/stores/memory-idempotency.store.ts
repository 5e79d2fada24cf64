import { PaymentsError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import { STORE_ARGUMENT_MESSAGES } from '../contracts/payments-webhooks.messages.js';
import { resolveClock, type PaymentsClock } from '../../core/payments.clock.js';
import { DEFAULT_RETENTION_SECONDS } from '../../core/payments.defaults.js';
import { PendingRejection, type Pending } from '../../core/payments.pending.js';
import { MemoryIntentWatchStore, type WatchEntries, type WatchEntry } from './memory-intent-watch.store.js';
import type {
  HandledState,
  IdempotencyClaim,
  IdempotencyStore,
  RunClaimRequest,
  RunCompletion,
  RunRelease,
  RunRenewal,
} from '../contracts/idempotency-store.interface.js';
import { MAX_DONE_PER_SLOT } from '../records/run-record.js';
import { handledOfSlots, intentRecordKey, recurs, stateOfSlot } from '../records/record-keys.js';

/** Options of `MemoryIdempotencyStore`. */
export interface MemoryIdempotencyStoreOptions {
  /**
   * Most records kept (one per intent, one per event that names no intent). Default 100000. Beyond it
   * the least recently used settled record goes first; a record with a run in flight, or a watched
   * intent's, is never evicted (a store full of them refuses new claims: 503). Size it above the
   * intents and events of one retention period: an evicted record's events run again if the service
   * redelivers them.
   */
  maxEntries?: number;
  /**
   * How long, in seconds, a completed run is remembered when `complete` is given no positive
   * retention, and how long a released run keeps its attempt count. Default `DEFAULT_RETENTION_SECONDS` (3 days).
   */
  retentionSeconds?: number;
  /** Clock in ms since the epoch (a `PaymentsRuntime` fits). Default `Date.now`. */
  now?: PaymentsClock;
  /**
   * Most intents the reconciler's watch list holds (`webhooks.reconcile`), kept in the records. Default
   * 100000; beyond it an intent is not watched (a warning names it and this option; its webhook still
   * settles it).
   */
  maxWatchedIntents?: number;
}

/**
 * A slot with a claim in flight (`owner`), or released with its attempt count kept (`owner` undefined).
 * `keep`: until when the run keeps its record alive (ms after the store's `#base`): its lease, and the
 * store's retention for its attempt count.
 */
interface Run {
  owner: string | undefined;
  until: number;
  attempt: number;
  keep: number;
}

/** A watched intent's entry in a watch list's heap, kept in its record. */
type RecordWatch = WatchEntry;

/**
 * One record in memory, compact because the store holds up to `maxEntries` of them for days: the
 * completed runs are one flat string of entries `\n<slot>\t<event id or *>\t<completion time, base 36>`
 * (oldest first), so a settled record is this object and two strings (its key and `done`).
 */
class MemoryRecord {
  done = '';
  /** Runs completed in this record. */
  version = 0;
  /** Slots claimed (in flight) or released (attempt counts); undefined when there are none. */
  runs: Map<string, Run> | undefined = undefined;
  /** The watch list's entry while the reconciler watches this intent. */
  watch: RecordWatch | undefined = undefined;
  /**
   * Until when its completed runs are kept (the latest completion's retention), in ms after the store's
   * `#base` (a small integer, held unboxed by V8). Runs in flight or released keep it alive longer.
   */
  expiresAt = 0;
}

/**
 * How far `#base` may fall behind the clock before the expiries are counted again from now (about 6
 * days). V8 keeps integers below 2^30 unboxed on every build: an expiry up to 6 more days ahead (the
 * default retention is 3) stays below it.
 */
const REBASE_AFTER_MS = 2 ** 29;

const DONE: IdempotencyClaim = Object.freeze({ status: 'done' });
const BUSY: IdempotencyClaim = Object.freeze({ status: 'busy' });
const NOTHING_HANDLED: readonly HandledState[] = Object.freeze([]);
/** Most completed runs a record keeps in all (a record lives per intent: a few states, a few handlers). */
const MAX_DONE_PER_RECORD = 256;

/**
 * The default `IdempotencyStore`: a bounded map of records in this process. Right for one instance;
 * with several instances, use `RedisIdempotencyStore` or `PostgresIdempotencyStore` so that they share
 * the records. A restart forgets every record, which is safe for work in flight (the service
 * redelivers) but lets an already handled event run again if it is redelivered after the restart.
 *
 * Every call is one map operation on one record, answered at once (no promise). At most `maxEntries`
 * records are held. A record with a run in flight, or of a watched intent, is never evicted: when the
 * store is full of them, `claim` rejects, so the receiver answers 503 and the service redelivers later,
 * rather than letting a copy of a running event run its handler concurrently. Settled records make
 * room, least recently used first.
 *
 * @example PaymentsModule.forRoot({ ..., webhooks: { verifier, store: new MemoryIdempotencyStore({ maxEntries: 50_000 }) } })
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  /** Records with a run in flight or a watched intent, in the order they became so. Never evicted. */
  readonly #active = new Map<string, MemoryRecord>();
  /** The other records, least recently used first (a Map keeps insertion order): the first is evicted first. */
  readonly #settled = new Map<string, MemoryRecord>();
  readonly #maxEntries: number;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #maxWatchedIntents: number | undefined;
  /** Intents watched now, over every watch list of this store. */
  #watched = 0;
  /** Last lease token handed out: tokens only need to be unique within this store (this process). */
  #lastToken = 0;
  /** The time expiries are counted from (see `MemoryRecord.expiresAt`). */
  #base: number;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    const retentionSeconds = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new PaymentsInvalidArgumentError(
        'MemoryIdempotencyStore',
        'maxEntries',
        STORE_ARGUMENT_MESSAGES.memoryMaxEntries,
      );
    }
    if (!Number.isFinite(retentionSeconds) || retentionSeconds <= 0) {
      throw new PaymentsInvalidArgumentError(
        'MemoryIdempotencyStore',
        'retentionSeconds',
        STORE_ARGUMENT_MESSAGES.positiveSeconds,
      );
    }
    const maxWatched = options.maxWatchedIntents;
    if (maxWatched !== undefined && (!Number.isInteger(maxWatched) || maxWatched < 1)) {
      throw new PaymentsInvalidArgumentError(
        'MemoryIdempotencyStore',
        'maxWatchedIntents',
        'must be a whole number >= 1 (most intents the in-memory watch list holds)',
      );
    }
    this.#maxEntries = maxEntries;
    this.#retentionMs = retentionSeconds * 1000;
    this.#now = resolveClock(options.now);
    this.#base = this.#now();
    this.#maxWatchedIntents = maxWatched;
  }

  /** Number of records held (expired ones included until they are touched or evicted). */
  get size(): number {
    return this.#active.size + this.#settled.size;
  }

  /**
   * @internal The records as plain data, by key (the protocol's model check compares the states it
   * reaches by them): completed runs, version, runs in flight or released, and whether watched.
   */
  snapshot(): Record<string, { done: string; version: number; runs: Record<string, Run>; watched: boolean }> {
    const out: Record<string, { done: string; version: number; runs: Record<string, Run>; watched: boolean }> = {};
    for (const records of [this.#active, this.#settled]) {
      for (const [key, record] of records) {
        out[key] = {
          done: record.done,
          version: record.version,
          runs: Object.fromEntries([...(record.runs ?? [])].map(([slot, run]) => [slot, { ...run }])),
          watched: record.watch !== undefined,
        };
      }
    }
    return out;
  }

  async close(): Promise<void> {
    this.#active.clear();
    this.#settled.clear();
    this.#watched = 0;
  }

  /**
   * Claims a run (see `IdempotencyStore`), answered at once. When `maxEntries` records are held and
   * none can make room, it rejects with a `PaymentsError` (the receiver answers 503, the service redelivers).
   */
  claim(key: string, request: RunClaimRequest): Pending<IdempotencyClaim> {
    const now = this.#now();
    let record = this.#active.get(key);
    if (record === undefined) {
      record = this.#settled.get(key);
      if (record !== undefined) {
        this.#settled.delete(key);
        if (isExpired(record, now - this.#base))
          record = undefined; // forgotten: a new record
        else this.#settled.set(key, record); // most recently used now
      }
    }
    const slot = request.slot;
    let run: Run | undefined;
    if (record !== undefined) {
      if (record.done !== '' && isDone(record, slot, request.eventId)) return DONE;
      run = record.runs?.get(slot);
      if (run?.owner !== undefined && run.until > now) return BUSY;
      if (request.exclusive === true && anotherStateRuns(record, slot, now)) return BUSY;
    } else {
      if (!this.#makeRoom(now)) return new PendingRejection(this.#full());
      record = new MemoryRecord();
    }
    // A counter, not a random UUID: nothing outside this process sees the token, and it is cheaper.
    const token = `${++this.#lastToken}`;
    const attempt = (run?.attempt ?? 0) + 1;
    const keep = now - this.#base + Math.max(request.leaseMs, this.#retentionMs);
    if (run === undefined) {
      (record.runs ??= new Map()).set(slot, { owner: token, until: now + request.leaseMs, attempt, keep });
    } else {
      run.owner = token;
      run.until = now + request.leaseMs;
      run.attempt = attempt;
      run.keep = Math.max(run.keep, keep);
    }
    this.#activate(key, record);
    return {
      status: 'claimed',
      token,
      attempt,
      version: record.version,
      handled: record.done === '' ? NOTHING_HANDLED : handledOf(record.done),
    };
  }

  /** Records the owner's run as done (see `IdempotencyStore`), at once. */
  complete(key: string, completion: RunCompletion): void {
    const record = this.#active.get(key);
    const run = record?.runs?.get(completion.slot);
    if (record === undefined || run === undefined || run.owner !== completion.token) return;
    const now = this.#now();
    if (now - this.#base > REBASE_AFTER_MS) this.#rebase(now);
    record.runs!.delete(completion.slot);
    if (record.runs!.size === 0) record.runs = undefined;
    record.done = withDone(record.done, completion.slot, completion.eventId ?? '*', now);
    record.version++;
    const until = now - this.#base + (completion.retentionMs > 0 ? completion.retentionMs : this.#retentionMs);
    // Stored as a small integer when it fits (`| 0`): a sum of epoch-ms numbers is a HeapNumber even when
    // small, and one stored double turns the field to a boxed double in every record (16 bytes each).
    // A retention over ~6 days can pass 2^30 and stays a double (`| 0` alone would wrap it).
    if (until > record.expiresAt) record.expiresAt = until <= 0x3fffffff ? until | 0 : until;
    if (completion.unwatch === true && record.watch !== undefined) record.watch.list.forget(record.watch.intent.id);
    this.#settleIfIdle(key, record);
  }

  /** Drops the owner's lease (see `IdempotencyStore`), at once, keeping its attempt count. */
  release(key: string, release: RunRelease): void {
    const record = this.#active.get(key);
    const run = record?.runs?.get(release.slot);
    if (record === undefined || run === undefined || run.owner !== release.token) return;
    run.owner = undefined;
    run.until = 0;
    run.keep = Math.max(run.keep, this.#now() - this.#base + this.#retentionMs);
    this.#settleIfIdle(key, record);
  }

  /** Extends the owner's lease to `leaseMs` from now, at once; false when the token no longer owns the slot. */
  renew(key: string, renewal: RunRenewal): boolean {
    const record = this.#active.get(key);
    const run = record?.runs?.get(renewal.slot);
    if (record === undefined || run === undefined || run.owner !== renewal.token) return false;
    const now = this.#now();
    run.until = now + renewal.leaseMs;
    run.keep = Math.max(run.keep, now - this.#base + renewal.leaseMs);
    // Moved last, so the first active record stays the first whose runs lapse (see #makeRoom).
    this.#active.delete(key);
    this.#active.set(key, record);
    return true;
  }

  /**
   * The reconciler's watch list of one module instance, kept in this store's records: a watched
   * intent's record says so (and is never evicted while it does), and the completion of a terminal
   * state's run ends the watch in the same call.
   */
  intentWatchStore(instance?: string): MemoryIntentWatchStore {
    const prefix = instance === undefined ? '' : `${instance}:`;
    const entries: WatchEntries = {
      get: (id) => this.#record(intentRecordKey(prefix, id))?.watch,
      set: (id, entry) => this.#watch(intentRecordKey(prefix, id), entry),
      delete: (id) => this.#unwatch(intentRecordKey(prefix, id)),
    };
    return new MemoryIntentWatchStore({ now: this.#now, entries });
  }

  #record(key: string): MemoryRecord | undefined {
    return this.#active.get(key) ?? this.#settled.get(key);
  }

  #watch(key: string, entry: RecordWatch): void {
    const max = this.#maxWatchedIntents ?? 100_000;
    if (this.#watched >= max) {
      throw new PaymentsError(
        `the in-memory watch list is full (${max} intents; MemoryIdempotencyStore maxWatchedIntents): ${entry.intent.id} is not watched, only its webhook settles it. Raise MemoryIdempotencyStore maxWatchedIntents, or keep the records in Redis or PostgreSQL`,
      );
    }
    let record = this.#record(key);
    if (record === undefined) {
      if (!this.#makeRoom(this.#now())) throw this.#full();
      record = new MemoryRecord();
    }
    record.watch = entry;
    this.#watched++;
    this.#activate(key, record);
  }

  #unwatch(key: string): void {
    const record = this.#active.get(key);
    if (record?.watch === undefined) return;
    record.watch = undefined;
    this.#watched--;
    this.#settleIfIdle(key, record);
  }

  /** Moves `record` to the active records (a run in flight, or watched): never evicted there. */
  #activate(key: string, record: MemoryRecord): void {
    if (this.#active.get(key) === record) return;
    this.#settled.delete(key);
    this.#active.set(key, record);
  }

  /** Back among the evictable records once no run is in flight and the intent is not watched. */
  #settleIfIdle(key: string, record: MemoryRecord): void {
    if (record.watch !== undefined) return;
    if (record.runs !== undefined) for (const run of record.runs.values()) if (run.owner !== undefined) return;
    this.#active.delete(key);
    this.#settled.set(key, record);
  }

  /** Counts expiries from `now` (once in about 6 days). */
  #rebase(now: number): void {
    const shift = now - this.#base;
    for (const records of [this.#settled, this.#active]) {
      for (const record of records.values()) {
        const expiresAt = record.expiresAt - shift;
        record.expiresAt = expiresAt >= -0x40000000 && expiresAt <= 0x3fffffff ? expiresAt | 0 : expiresAt;
        if (record.runs !== undefined) for (const run of record.runs.values()) run.keep -= shift;
      }
    }
    this.#base = now;
  }

  /**
   * Frees one slot when the store is full: the least recently used settled record, else the oldest
   * active one if its runs' leases all ended and it is not watched (their owners are gone). False when
   * every record held is in use.
   */
  #makeRoom(now: number): boolean {
    if (this.#active.size + this.#settled.size < this.#maxEntries) return true;
    if (this.#settled.size > 0) {
      this.#settled.delete(this.#settled.keys().next().value!);
      return true;
    }
    const oldest = this.#active.entries().next().value;
    if (oldest !== undefined && oldest[1].watch === undefined) {
      let live = false;
      for (const run of oldest[1].runs?.values() ?? []) if (run.owner !== undefined && run.until > now) live = true;
      if (!live) {
        this.#active.delete(oldest[0]);
        return true;
      }
    }
    return false;
  }

  #full(): PaymentsError {
    return new PaymentsError(
      `MemoryIdempotencyStore is full: all ${this.#maxEntries} records have a handler running now or a watched intent (raise maxEntries, or use a shared store such as RedisIdempotencyStore)`,
    );
  }
}

/** A record whose completed runs' retention ended, with no run keeping it and no watch: forgotten. */
function isExpired(record: MemoryRecord, now: number): boolean {
  if (record.watch !== undefined || record.expiresAt > now) return false;
  if (record.runs !== undefined) for (const run of record.runs.values()) if (run.keep > now) return false;
  return true;
}

/**
 * Rule 1 of a claim: done when `slot` ran at all, unless its state may recur (`requires_*`): then when
 * it ran this event, or a retrieve's run of it that no webhook matched yet (which becomes this event's),
 * or the claim is a retrieve's.
 */
function isDone(record: MemoryRecord, slot: string, eventId: string | undefined): boolean {
  const done = record.done;
  if (eventId === undefined || !recurs(slot)) return done.includes(['\n', slot, '\t'].join(''));
  if (done.includes(['\n', slot, '\t', eventId, '\t'].join(''))) return true;
  const retrieved = ['\n', slot, '\t*\t'].join('');
  const at = done.indexOf(retrieved);
  if (at < 0) return false;
  const id = at + retrieved.length - 2;
  record.done = [done.slice(0, id), eventId, done.slice(id + 1)].join('');
  return true;
}

/** Whether a run of another state than `slot`'s holds a live lease in `record` (exclusive claims). */
function anotherStateRuns(record: MemoryRecord, slot: string, now: number): boolean {
  if (record.runs === undefined) return false;
  const state = stateOfSlot(slot);
  for (const [other, run] of record.runs) {
    if (run.owner !== undefined && run.until > now && other !== slot && stateOfSlot(other) !== state) return true;
  }
  return false;
}

/** `done` with a completed run of `slot` for `id` appended (flat), the oldest dropped past the bounds. */
function withDone(done: string, slot: string, id: string, now: number): string {
  let next = [done, '\n', slot, '\t', id, '\t', now.toString(36)].join('');
  if (
    next.length > 200 &&
    (countOf(next, `\n${slot}\t`) > MAX_DONE_PER_SLOT || countOf(next, '\n') > MAX_DONE_PER_RECORD)
  ) {
    const entries = next.split('\n').slice(1);
    const mine = entries.filter((entry) => entry.startsWith(`${slot}\t`));
    const drop = mine.length > MAX_DONE_PER_SLOT ? mine[0] : entries[0];
    entries.splice(entries.indexOf(drop!), 1);
    next = entries.map((entry) => `\n${entry}`).join('');
  }
  return next;
}

function countOf(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length)) count++;
  return count;
}

/** The (state, handler) slots completed in a record's `done`, the latest time each (see `handledOfSlots`). */
function handledOf(done: string): readonly HandledState[] {
  const latest = new Map<string, number>();
  for (const entry of done.split('\n')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const at = parseInt(entry.slice(entry.lastIndexOf('\t') + 1), 36);
    const slot = entry.slice(0, tab);
    if (!(at <= (latest.get(slot) ?? 0))) latest.set(slot, at);
  }
  const handled = handledOfSlots(latest);
  return handled.length === 0 ? NOTHING_HANDLED : handled;
}
