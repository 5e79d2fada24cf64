import { fail, isObject, kind } from '../../errors/payments-option.checks.js';
import type { IntentWatchStore } from '../contracts/intent-watch-store.interface.js';
import type { ResolvedPaymentsReconcileOptions } from '../contracts/payments-reconcile.options.js';

/** Every minute for 15 minutes, every 5 up to an hour, every 15 up to a day, then hourly. */
export const DEFAULT_RECONCILE_CADENCE = Object.freeze([
  { untilAgeSeconds: 15 * 60, everySeconds: 60 },
  { untilAgeSeconds: 60 * 60, everySeconds: 5 * 60 },
  { untilAgeSeconds: 24 * 60 * 60, everySeconds: 15 * 60 },
  { untilAgeSeconds: Number.POSITIVE_INFINITY, everySeconds: 60 * 60 },
]);

const DEFAULT_TERMINAL = { payment_intent: ['succeeded', 'cancelled'], setup_intent: ['succeeded', 'cancelled'] };

const seconds = (raw: Record<string, unknown>, name: string, fallback: number, min = 1): number => {
  const value = raw[name] ?? fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    fail(`webhooks.reconcile.${name}`, `must be a number >= ${min}`, `pass a number, or omit it for ${fallback}`);
  }
  return value as number;
};

/**
 * Validates `webhooks.reconcile` (called by the receiver's validator): on with the defaults when it is
 * left out (`byDefault`), undefined only for `false`, the one switch that turns it off.
 */
export function resolveReconcileOptions(raw: unknown): ResolvedPaymentsReconcileOptions | undefined {
  if (raw === false) return undefined;
  if (raw === undefined) return Object.freeze({ ...resolveReconcileOptions({})!, byDefault: true as const });
  if (raw === true) raw = {};
  if (!isObject(raw)) {
    return fail(
      'webhooks.reconcile',
      `must be an object or a boolean, got ${kind(raw)}`,
      'pass { afterSeconds?, ... }, omit it (on, with the defaults), or pass false to turn reconciliation off',
    );
  }
  const cadence = raw['cadence'] ?? DEFAULT_RECONCILE_CADENCE;
  if (
    !Array.isArray(cadence) ||
    cadence.length === 0 ||
    !cadence.every(
      (step: unknown) =>
        isObject(step) &&
        typeof step['untilAgeSeconds'] === 'number' &&
        typeof step['everySeconds'] === 'number' &&
        step['everySeconds'] >= 1,
    )
  ) {
    fail(
      'webhooks.reconcile.cadence',
      'must be a non-empty array of { untilAgeSeconds, everySeconds >= 1 }',
      'pass e.g. [{ untilAgeSeconds: 900, everySeconds: 60 }, { untilAgeSeconds: Infinity, everySeconds: 3600 }]',
    );
  }
  const terminal = (raw['terminalStates'] ?? {}) as Record<string, unknown>;
  const statesOf = (name: 'payment_intent' | 'setup_intent'): ReadonlySet<string> => {
    const states = terminal[name] ?? DEFAULT_TERMINAL[name];
    if (
      !Array.isArray(states) ||
      !states.every((s) => typeof s === 'string' && s !== '' && !s.startsWith('requires_'))
    ) {
      fail(
        `webhooks.reconcile.terminalStates.${name}`,
        'must be an array of state names, none of them requires_* (such a state may recur)',
        `pass e.g. ${JSON.stringify(DEFAULT_TERMINAL[name])}`,
      );
    }
    return new Set(states as string[]);
  };
  const watch = raw['watch'] ?? 'all';
  if (watch !== 'all' && watch !== 'opted-in') {
    fail('webhooks.reconcile.watch', "must be 'all' or 'opted-in'", "omit it for 'all'");
  }
  const store = raw['store'];
  if (
    store !== undefined &&
    (!isObject(store) || typeof store['due'] !== 'function' || typeof store['lease'] !== 'function')
  ) {
    fail(
      'webhooks.reconcile.store',
      'must implement IntentWatchStore',
      'omit it to keep the list in the idempotency store engine',
    );
  }
  const perSecond = seconds(raw, 'maxRetrievesPerSecond', 5, 0.01);
  const concurrency = seconds(raw, 'maxConcurrentRetrieves', Math.min(32, Math.max(1, Math.ceil(perSecond))), 1);
  if (!Number.isInteger(concurrency)) {
    fail('webhooks.reconcile.maxConcurrentRetrieves', 'must be a whole number >= 1', 'pass e.g. 5, or omit it');
  }
  return Object.freeze({
    afterMs: seconds(raw, 'afterSeconds', 60, 0) * 1000,
    everyMs: seconds(raw, 'everySeconds', 30) * 1000,
    cadence: Object.freeze(
      (cadence as Array<{ untilAgeSeconds: number; everySeconds: number }>).map((step) => ({
        untilAgeMs: step.untilAgeSeconds * 1000,
        everyMs: step.everySeconds * 1000,
      })),
    ),
    maxAgeMs: seconds(raw, 'maxAgeSeconds', 7 * 24 * 60 * 60) * 1000,
    batchSize: Math.floor(seconds(raw, 'batchSize', 100)),
    minRetrieveGapMs: Math.ceil(1000 / perSecond),
    maxConcurrentRetrieves: concurrency,
    terminalStates: { payment_intent: statesOf('payment_intent'), setup_intent: statesOf('setup_intent') },
    watch: watch as 'all' | 'opted-in',
    store: store as IntentWatchStore | undefined,
  });
}

/** When an intent of age `ageMs` is next due: the cadence step its age falls in. */
export function nextCheckDelayMs(ageMs: number, cadence: ResolvedPaymentsReconcileOptions['cadence']): number {
  for (const step of cadence) if (ageMs < step.untilAgeMs) return step.everyMs;
  return cadence[cadence.length - 1]!.everyMs;
}
