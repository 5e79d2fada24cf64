import type { PaymentIntent, SetupIntent } from '../../client/payments.types.js';
import type { CreatedIntentListener } from '../../client/payments-created-intents.js';
import type { PaymentsRuntime } from '../../core/payments.runtime.js';
import type { IntentWatchStore } from '../contracts/intent-watch-store.interface.js';

/** What the reconciler needs of the API client (`PaymentsService`). */
export interface ReconcileClient {
  paymentIntents: { retrieve(id: string): Promise<PaymentIntent> };
  setupIntents: { retrieve(id: string): Promise<SetupIntent> };
  onIntentCreated?(listener: CreatedIntentListener): () => void;
}

/** What one sweep did. `stopped` says why it ended before its batch did (the next sweep goes on). */
export interface ReconcileSweepResult {
  /** False when another instance holds the sweeper lease (nothing was checked here). */
  swept: boolean;
  checked: number;
  /** A terminal state no webhook had delivered: its handlers ran now. */
  reconciled: number;
  /** A terminal state whose handlers had already run (its webhook came): nothing ran. */
  settled: number;
  /** Not in a terminal state yet: checked again later. */
  pending: number;
  /** Older than `maxAgeSeconds` and still not terminal: no longer watched (logged for a person). */
  gaveUp: number;
  /** The service answered 404: no longer watched. */
  gone: number;
  /**
   * `rate_limited`: a 429 after the client's retries; `unavailable`: three retrieves in a row got no
   * answer (network, timeout) or a 401/403; `store_unavailable`: the watch store failed; `lease_lost`:
   * the sweeper lease could not be kept (another instance may sweep now). Each intent tried was
   * rescheduled on its own cadence.
   */
  stopped?: 'rate_limited' | 'unauthorized' | 'unavailable' | 'store_unavailable' | 'lease_lost';
}

export const systemSleepRuntime: PaymentsRuntime = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: () => Math.random(),
};

// Moved beside the dispatcher's current-state handling, which builds the same event: one builder.
export { RECONCILED_EVENT_NAMESPACE, reconciledEvent } from '../records/retrieved-state.event.js';

export function sweepLine(r: ReconcileSweepResult): string {
  const stopped = r.stopped ? `; stopped: ${r.stopped}` : '';
  return `Reconciliation sweep: checked ${r.checked}, reconciled ${r.reconciled}, already handled ${r.settled}, still pending ${r.pending}, gave up ${r.gaveUp}, gone ${r.gone}${stopped}`;
}

export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : typeof error;
}

/** `45 s`, `12 min`, `5 h`, `3 d`: an intent's age in a log line. */
export function formatAge(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 2 * 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/** The sweeper lease, renewed every third of its length while a sweep runs. */
export interface KeptLease {
  /**
   * Before each check: renews the lease when a third of it has passed (by the runtime's clock); false
   * once a renewal was refused or failed (another instance may sweep now: stop).
   */
  held(): Promise<boolean>;
  stop(): void;
}

/**
 * Keeps `owner`'s sweeper lease while a sweep runs, so that a sweep slower than its lease never lets a
 * second instance check the same intents: renewed before a check once a third of it has passed, and
 * by an unref()ed timer during a long check (a slow handler).
 */
export function keepLease(
  store: Pick<IntentWatchStore, 'lease'>,
  owner: string,
  leaseMs: number,
  now: () => number,
  /** When the lease now held was asked for (before the call that granted it): it runs from then. */
  grantedAt: number = now(),
): KeptLease {
  let lost = false;
  let renewedAt = grantedAt;
  const everyMs = Math.max(1, Math.floor(leaseMs / 3));
  const renew = async (): Promise<void> => {
    const started = now();
    try {
      if (await store.lease(owner, leaseMs)) renewedAt = Math.max(renewedAt, started);
      else lost = true;
    } catch {
      lost = true;
    }
  };
  const timer = setInterval(() => void renew(), everyMs);
  timer.unref?.();
  return {
    held: async () => {
      if (!lost && now() - renewedAt >= everyMs) await renew();
      return !lost;
    },
    stop: () => clearInterval(timer),
  };
}
