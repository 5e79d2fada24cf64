import type { Pending } from '../../core/payments.pending.js';
import type { IntentWatchStore } from './intent-watch-store.interface.js';

/**
 * Which run of a record a call is about. The receiver keeps **one record per (instance, intent)** for
 * the events of an intent's states (`payment_intent.*`, `setup_intent.*` naming a valid intent), and one
 * per event for every other event; a record holds one slot per run:
 * - `<state>|<handlerId>` in an intent's record (`succeeded|Fulfilment.paid`): that handler's runs of
 *   that state;
 * - `<handlerId>` in an event's record.
 *
 * States are `[a-z0-9_]`, handler ids never hold a `|`: a slot splits at its first `|`.
 */
export interface RunSlot {
  readonly slot: string;
}

/** `claim`: may this run start now? */
export interface RunClaimRequest extends RunSlot {
  /**
   * The event a webhook runs the slot for (its id, a lower-case UUID). Absent for a run from a retrieve
   * of the intent (reconciliation, current-state handling): such a run stands for the next webhook of
   * that state, which then finds it done.
   */
  readonly eventId?: string;
  /** How long the run may hold the slot before another claim may take it (renewed while it runs). */
  readonly leaseMs: number;
  /**
   * Current-state runs: `busy` while a run of **another state** of this record holds a live lease, so
   * the runs of one intent's states never overlap.
   */
  readonly exclusive?: boolean;
}

/** `complete`: the run ended well; record it. */
export interface RunCompletion extends RunSlot {
  readonly token: string;
  /** As in the claim: the event the run was for, absent for a run from a retrieve. */
  readonly eventId?: string;
  /** How long the record is kept at least (the event can be redelivered for that long). */
  readonly retentionMs: number;
  /**
   * The intent reached a state after which it never changes (this release's `terminalStates`): it is
   * no longer watched for reconciliation, in the same call. Never changes what a claim answers.
   */
  readonly unwatch?: boolean;
}

/** `release`: the run failed or was not started; a redelivery may claim it again. */
export interface RunRelease extends RunSlot {
  readonly token: string;
}

/** `renew`: the run goes on; extend its lease. */
export interface RunRenewal extends RunSlot {
  readonly token: string;
  readonly leaseMs: number;
}

/**
 * A state of the record's intent that a handler's run completed, and when (ms since the epoch, the
 * store's clock): one per (state, handler) slot with a completed run, the latest completion of each.
 */
export interface HandledState {
  readonly state: string;
  /**
   * The handler whose run completed it (the slot's handler id). The built-in stores always tell; a
   * store that keeps only the states may leave it out, and then lists each state once.
   */
  readonly handler?: string;
  readonly at: number;
}

/**
 * Result of `IdempotencyStore.claim`:
 * - `claimed`: the caller owns the run for the lease and must `complete` or `release` it. `attempt`
 *   counts the claims granted on this slot (1 on the first); `version` counts the runs completed in
 *   the whole record; `handled` lists the states of the record's intent that some run completed, one
 *   entry per (state, handler) with its latest completion, read from the record this claim changed
 *   (no other round trip), empty for an event's record. The receiver hands it to the handler as
 *   `ctx.handled`;
 * - `done`: the run already happened (this event, or a retrieve's run of this state), skip it;
 * - `busy`: another run holds the slot (or, for an exclusive claim, another state of the intent).
 */
export type IdempotencyClaim =
  | {
      status: 'claimed';
      token: string;
      attempt: number;
      version?: number;
      handled?: readonly HandledState[];
    }
  | { status: 'done' }
  | { status: 'busy' };

/**
 * Where the receiver records which handler ran which event or intent state, and which runs are in
 * flight. Implement it to use another engine; the built-ins are `MemoryIdempotencyStore`,
 * `RedisIdempotencyStore` and `PostgresIdempotencyStore`, and `runRecord` (`nestjs-payments/webhooks`)
 * holds the rules as plain functions over a JSON document, for a store written over any engine with
 * conditional writes (docs/custom-store.md).
 *
 * **Each call changes one record atomically**: one call is the whole of a step, never two writes that
 * another call could come between. The rules, in the order a claim applies them:
 * 1. `done`: the slot has a completed run, and either its state does not recur (any state but
 *    `requires_*`: a handler runs it once per intent, whichever event or retrieve brings it; an event's
 *    own record is one event) or the claim is a retrieve's; or, for a state that may recur
 *    (`requires_*`: each of its events runs), the completed runs include this event (`eventId`), or a
 *    retrieve's run that no webhook has matched yet (that run now counts as this event's);
 * 2. `busy`: the slot's lease is live; or the claim is `exclusive` and another state's slot holds a
 *    live lease;
 * 3. else `claimed`: a new token owns the slot for `leaseMs`, and its attempt count goes up by one.
 *
 * A token "owns" a slot while it is the latest claim's: its lease live, or lapsed with nobody claiming
 * since. `complete`, `release` and `renew` act only for the owner, and do nothing otherwise. Any method
 * may reject (engine down): the receiver then answers 503 and runs nothing. Never answer `done` or
 * `busy` for an error. A method answers a promise, or its value at once when it knows it without
 * waiting (`Pending<T>`, as the in-memory store does).
 */
export interface IdempotencyStore {
  /** Claims the run `request.slot` of the record `key` (see the rules above). */
  claim(key: string, request: RunClaimRequest): Pending<IdempotencyClaim>;
  /**
   * Records the owner's run as done (with its `eventId`, or as a retrieve's run), bumps the record's
   * version, keeps the record for `retentionMs` at least, and with `unwatch` stops watching the intent.
   */
  complete(key: string, completion: RunCompletion): Pending<void>;
  /** Drops the owner's lease, keeping the attempt count, so that a redelivery can claim the run again. */
  release(key: string, release: RunRelease): Pending<void>;
  /**
   * Optional, strongly recommended: extends the owner's lease to `leaseMs` from now. Resolves `true`
   * when extended, `false` when the token no longer owns the slot (another claim took it, it was
   * completed or released, or the record is gone). The receiver calls it every `claimTtlSeconds / 3`
   * while a handler runs past that point, so a handler that runs longer than its lease is never run a
   * second time by a redelivery. A store without it still works (the module warns at boot).
   *
   * @example renew('pi:9f6c…', { slot: 'succeeded|Orders.paid', token, leaseMs: 300_000 })
   */
  renew?(key: string, renewal: RunRenewal): Pending<boolean>;
  /**
   * Optional: the reconciler's watch list of one module instance (`instance`: its name, undefined for
   * the unnamed one), kept in the records themselves (the record of a watched intent says it is
   * watched and when it is next due; `complete` with `unwatch` ends that) and shared by every process
   * of the instance. The built-in stores have one; without it the reconciler keeps its list in memory
   * (one process only).
   */
  intentWatchStore?(instance?: string): IntentWatchStore;
  /** Optional: release resources on application shutdown. */
  close?(): Promise<void>;
  /**
   * Optional: one round trip to the engine, for health checks (`nestjs-payments/health`). Rejects when
   * the engine does not answer. A store without it (the in-memory one) counts as healthy.
   */
  ping?(): Promise<void>;
}

/** Injection token of the store in use (same name as the interface, as `@nestjs/throttler` does). */
export const IdempotencyStore = Symbol('IdempotencyStore');
