import type { Pending } from '../../core/payments.pending.js';

/** The two kinds of intent a merchant creates through `PaymentsService`. */
export type WatchedIntentKind = 'payment_intent' | 'setup_intent';

/** One intent the reconciler watches until it reaches a terminal state (or grows too old). */
export interface WatchedIntent {
  kind: WatchedIntentKind;
  /** The intent's id (a UUID). */
  id: string;
  /** When it was created, in ms since the epoch (the creating instance's clock). */
  createdAt: number;
  /** When it is next due for a check (GET), in ms since the epoch. */
  nextCheckAt: number;
  /** Checks done so far. */
  checks: number;
}

/**
 * Where the reconciler keeps the intents it watches, in the engine of the idempotency store (memory,
 * Redis, PostgreSQL), plus the lease that lets one sweeper run at a time across instances. Any method
 * may reject (engine down): the sweep then stops and the next one tries again.
 */
export interface IntentWatchStore {
  /** Starts watching `intent` (nothing changes when it is watched already). */
  watch(intent: WatchedIntent): Pending<void>;
  /**
   * Up to `limit` watched intents due at `now` (`nextCheckAt <= now`): those never checked (`checks`
   * 0) first, then the others, each in due order (so a new intent's first check never waits behind a
   * backlog). Read from an index: the sweep calls it once per batch, whatever the list's size.
   */
  due(now: number, limit: number): Pending<WatchedIntent[]>;
  /** Records a check: the next one at `nextCheckAt` (a forgotten intent stays forgotten). */
  reschedule(id: string, nextCheckAt: number, checks: number): Pending<void>;
  /** Stops watching `id` (terminal state reached, gone, or given up). */
  forget(id: string): Pending<void>;
  /**
   * Takes or extends the sweeper lease for `owner` for `ms`, unless another owner holds it; true when
   * `owner` holds it now. Timed by the engine (Redis `PX`, PostgreSQL's clock), so instances with skewed
   * clocks still agree on who sweeps.
   */
  lease(owner: string, ms: number): Pending<boolean>;
  /** Every watched intent (for the operator view and tests); small lists only. */
  list?(): Pending<WatchedIntent[]>;
  /**
   * True when the list lives in the idempotency store's records (the built-in stores' lists): the
   * completion of a terminal state's run ends the watch in the same store call (`RunCompletion.unwatch`).
   */
  readonly inRecords?: boolean;
}

/** Injection token of the watch store in use. */
export const IntentWatchStore = Symbol('IntentWatchStore');
