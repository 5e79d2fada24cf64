import type { IntentWatchStore } from './intent-watch-store.interface.js';

/** One step of the check cadence: while an intent is younger than `untilAgeSeconds`, check it every `everySeconds`. */
export interface ReconcileCadenceStep {
  untilAgeSeconds: number;
  everySeconds: number;
}

/**
 * `webhooks.reconcile`: watch the intents created through `PaymentsService`, and for any that reaches a
 * terminal state no webhook delivered, run the handlers of that state's event from a retrieve of the
 * intent, once per (intent, terminal state) and handler across webhook and reconciler alike. See
 * docs/reconciliation.md.
 *
 * @example webhooks: { verifier, store, reconcile: { afterSeconds: 120 } }
 */
export interface PaymentsReconcileOptions {
  /** First check of a new intent after this many seconds (time for its webhook to come). Default 60. */
  afterSeconds?: number;
  /** How often this instance tries to sweep (one sweeper at a time across instances). Default 30. */
  everySeconds?: number;
  /**
   * Check cadence by age. Default: every minute for the first 15 minutes, every 5 up to an hour, every
   * 15 up to a day, then hourly.
   */
  cadence?: ReconcileCadenceStep[];
  /** Stop watching (logged and reported, for a person to look at) after this many seconds. Default 7 days. */
  maxAgeSeconds?: number;
  /** Most intents checked in one sweep. Default 100. */
  batchSize?: number;
  /** Most retrieves per second a sweep sends (each one is an API call). Default 5. */
  maxRetrievesPerSecond?: number;
  /**
   * Most retrieves in flight at once (each started at most `maxRetrievesPerSecond`). Default: one
   * second's worth, `ceil(maxRetrievesPerSecond)` between 1 and 32, so the rate holds with answers up to a
   * second slow. 1 checks one intent at a time.
   */
  maxConcurrentRetrieves?: number;
  /**
   * The states after which an intent never changes again. The reference does not show the transitions,
   * so this is yours to set; only these are ever synthesised (a `requires_*` state may recur, never).
   * Default `{ payment_intent: ['succeeded', 'cancelled'], setup_intent: ['succeeded', 'cancelled'] }`.
   */
  terminalStates?: { payment_intent?: string[]; setup_intent?: string[] };
  /** `'all'` (default): every intent created through `PaymentsService`; `'opted-in'`: only `create(params, { reconcile: true })`. */
  watch?: 'all' | 'opted-in';
  /** Where the watch list lives. Default: in the idempotency store's engine (memory, Redis, PostgreSQL). */
  store?: IntentWatchStore;
}

/** `webhooks.reconcile` after validation. */
export interface ResolvedPaymentsReconcileOptions {
  afterMs: number;
  everyMs: number;
  cadence: ReadonlyArray<{ untilAgeMs: number; everyMs: number }>;
  maxAgeMs: number;
  batchSize: number;
  minRetrieveGapMs: number;
  /** Most retrieves in flight at once. */
  maxConcurrentRetrieves: number;
  terminalStates: { payment_intent: ReadonlySet<string>; setup_intent: ReadonlySet<string> };
  watch: 'all' | 'opted-in';
  store: IntentWatchStore | undefined;
  /** On because `webhooks.reconcile` was left out (the default), not because it was asked for. */
  byDefault?: true;
}

/**
 * The terminal states when `webhooks.reconcile.terminalStates` is not set: the states whose webhook
 * takes an intent off the watch list, and the only ones a sweep dispatches.
 */
export const DEFAULT_TERMINAL_STATES: ResolvedPaymentsReconcileOptions['terminalStates'] = Object.freeze({
  payment_intent: new Set(['succeeded', 'cancelled']),
  setup_intent: new Set(['succeeded', 'cancelled']),
});
