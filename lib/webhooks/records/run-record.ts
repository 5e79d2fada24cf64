import type {
  HandledState,
  IdempotencyClaim,
  RunClaimRequest,
  RunCompletion,
  RunRelease,
  RunRenewal,
} from '../contracts/idempotency-store.interface.js';
import type { WatchedIntent } from '../contracts/intent-watch-store.interface.js';
import { handledOfSlots, recurs, stateOfSlot } from './record-keys.js';

/** One slot of a `RunRecordDocument`: one handler's runs of one state (or of one event). */
export interface RunRecordSlot {
  /**
   * The events whose run completed (their ids), and `'*'` for a retrieve's run that no webhook of its
   * state has matched yet; oldest first, at most `MAX_DONE_PER_SLOT`.
   */
  done?: string[];
  /** When the latest run completed (ms since the epoch). */
  doneAt?: number;
  /** Token of the latest claim, until it completes or is released. */
  owner?: string;
  /** End of the owner's lease (ms since the epoch). */
  until?: number;
  /** Claims granted on this slot. */
  attempts?: number;
  /** Until when this run keeps the record alive (ms): its lease, and its attempt count after a release. */
  keep?: number;
}

/**
 * The record of one intent (or of one event) as a JSON document: what a store written over a document
 * engine (DynamoDB, Firestore, Cosmos DB, etcd, a SQL row with a JSON column) keeps under the record's
 * key, changed only through `runRecord`'s functions and written back with a conditional write.
 */
export interface RunRecordDocument {
  /** The runs by slot (`<state>|<handlerId>`, or `<handlerId>` in an event's record). */
  runs: Record<string, RunRecordSlot>;
  /** Runs completed in the whole record. */
  version: number;
  /**
   * Until when the completed runs are kept (ms since the epoch, the latest completion's retention). The
   * record may be deleted after it, unless `watch` is set or a slot's `keep` is later.
   */
  expiresAt: number;
  /** Set while the reconciler watches the intent (a store's `intentWatchStore` keeps it here). */
  watch?: WatchedIntent;
}

/** Most event ids kept per slot: a state recurs a few times per intent, never hundreds. */
export const MAX_DONE_PER_SLOT = 16;

const DONE: IdempotencyClaim = Object.freeze({ status: 'done' });
const BUSY: IdempotencyClaim = Object.freeze({ status: 'busy' });
const RETRIEVED = '*';

/** What `runRecord.claim` decided: the answer, and the document to write when `changed`. */
export interface RunRecordClaim {
  readonly claim: IdempotencyClaim;
  readonly document: RunRecordDocument;
  /** Whether `document` differs from the one read (write it back, conditionally, only then). */
  readonly changed: boolean;
}

/** Whether nothing of `document` is to be kept at `now`: it counts as absent. */
const isExpired = (document: RunRecordDocument, now: number): boolean =>
  document.watch === undefined &&
  document.expiresAt <= now &&
  Object.values(document.runs).every((run) => (run.keep ?? 0) <= now);

const emptyDocument = (): RunRecordDocument => ({ runs: {}, version: 0, expiresAt: 0 });

const isLive = (slot: RunRecordSlot | undefined, now: number): boolean =>
  slot?.owner !== undefined && (slot.until ?? 0) > now;

/** A copy of `document` that a function may change without touching what was read. */
const copyOf = (document: RunRecordDocument): RunRecordDocument => {
  const runs: Record<string, RunRecordSlot> = {};
  for (const [slot, run] of Object.entries(document.runs)) runs[slot] = { ...run, done: run.done && [...run.done] };
  return { ...document, runs };
};

/**
 * The rules of `IdempotencyStore` as plain functions over a `RunRecordDocument`: read the record
 * (undefined when absent), call one, and write the result back only if nobody wrote the record since
 * it was read (a conditional write on a version or an etag); on a lost race, read and call again.
 * `now` is the store's clock (ms). The built-in stores implement the same rules natively (a Lua
 * script, a PostgreSQL function, a map); `describeIdempotencyStore` holds them all to it.
 */
export const runRecord = {
  /**
   * `claim` (see `IdempotencyStore`): `token` is the new owner's, made by the caller (a random UUID);
   * `retainMs` keeps the attempt count of a run that never completes (the store's retention).
   */
  claim(
    read: RunRecordDocument | undefined,
    request: RunClaimRequest,
    now: number,
    token: string,
    retainMs: number,
  ): RunRecordClaim {
    const fresh = read === undefined || isExpired(read, now);
    const document = fresh ? emptyDocument() : copyOf(read);
    if (fresh && read?.watch !== undefined) document.watch = read.watch;
    const slot = document.runs[request.slot];
    const done = slot?.done;
    if (done !== undefined && done.length > 0) {
      if (request.eventId === undefined || !recurs(request.slot)) return { claim: DONE, document, changed: false };
      if (done.includes(request.eventId)) return { claim: DONE, document, changed: false };
      const retrieved = done.indexOf(RETRIEVED);
      if (retrieved >= 0) {
        // The webhook of the state a retrieve already ran: that run was this event's.
        done[retrieved] = request.eventId;
        return { claim: DONE, document, changed: true };
      }
    }
    if (isLive(slot, now)) return { claim: BUSY, document, changed: false };
    if (request.exclusive === true) {
      const state = stateOfSlot(request.slot);
      for (const [other, run] of Object.entries(document.runs)) {
        if (other !== request.slot && stateOfSlot(other) !== state && isLive(run, now)) {
          return { claim: BUSY, document, changed: false };
        }
      }
    }
    const attempt = (slot?.attempts ?? 0) + 1;
    const keep = Math.max(slot?.keep ?? 0, now + Math.max(request.leaseMs, retainMs));
    document.runs[request.slot] = { ...slot, owner: token, until: now + request.leaseMs, attempts: attempt, keep };
    const claim: IdempotencyClaim = {
      status: 'claimed',
      token,
      attempt,
      version: document.version,
      handled: runRecord.handled(document),
    };
    return { claim, document, changed: true };
  },

  /** `complete`: the new document, or undefined when `token` does not own the slot (nothing changes). */
  complete(read: RunRecordDocument | undefined, completion: RunCompletion, now: number): RunRecordDocument | undefined {
    if (read?.runs[completion.slot]?.owner !== completion.token) return undefined;
    const document = copyOf(read);
    const slot = document.runs[completion.slot]!;
    const done = slot.done ?? [];
    done.push(completion.eventId ?? RETRIEVED);
    if (done.length > MAX_DONE_PER_SLOT) done.splice(0, done.length - MAX_DONE_PER_SLOT);
    document.runs[completion.slot] = { done, doneAt: now };
    document.version += 1;
    document.expiresAt = Math.max(document.expiresAt, now + completion.retentionMs);
    if (completion.unwatch === true) delete document.watch;
    return document;
  },

  /**
   * `release`: the new document, or undefined when `token` does not own the slot. `retainMs` keeps the
   * attempt count (the store's retention).
   */
  release(
    read: RunRecordDocument | undefined,
    release: RunRelease,
    now: number,
    retainMs: number,
  ): RunRecordDocument | undefined {
    if (read?.runs[release.slot]?.owner !== release.token) return undefined;
    const document = copyOf(read);
    const slot = document.runs[release.slot]!;
    delete slot.owner;
    delete slot.until;
    slot.keep = Math.max(slot.keep ?? 0, now + retainMs);
    return document;
  },

  /** `renew`: the new document, or undefined when `token` does not own the slot (the lease is lost). */
  renew(read: RunRecordDocument | undefined, renewal: RunRenewal, now: number): RunRecordDocument | undefined {
    if (read?.runs[renewal.slot]?.owner !== renewal.token) return undefined;
    const document = copyOf(read);
    const slot = document.runs[renewal.slot]!;
    slot.until = now + renewal.leaseMs;
    slot.keep = Math.max(slot.keep ?? 0, slot.until);
    return document;
  },

  /**
   * The states of the record's intent that a run completed: one entry per (state, handler) slot, the
   * latest completion of each, sorted by state then handler.
   */
  handled(document: RunRecordDocument): HandledState[] {
    const latest = new Map<string, number>();
    for (const [slot, run] of Object.entries(document.runs)) {
      if (run.doneAt !== undefined) latest.set(slot, run.doneAt);
    }
    return handledOfSlots(latest);
  },
};
