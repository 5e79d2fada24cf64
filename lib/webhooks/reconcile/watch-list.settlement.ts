import { isPromiseLike } from '../../core/payments.pending.js';
import {
  MAX_CURRENT_STATE_WAIT_MS,
  type DispatchSummary,
  type PaymentsDispatchPlugin,
  type RetrieveAnswer,
} from '../contracts/dispatch-plugin.interface.js';
import { PaymentsApiError } from '../../errors/payments.errors.js';
import { reserveRetrieve, type RetrievePacing } from './reconcile-batch.js';
import type { EventRecord } from '../contracts/event-record.types.js';
import type { IntentWatchStore } from '../contracts/intent-watch-store.interface.js';
import type { ResolvedPaymentsReconcileOptions } from '../contracts/payments-reconcile.options.js';

/**
 * Reconciliation's hooks in the dispatcher: a webhook that settled a watched intent's terminal state
 * (its handlers ran now or earlier) means the reconciler need not retrieve it; the intent is no longer
 * watched. When the list lives in the idempotency store's records, the completion of the run does it
 * in the same store call (`unwatches`); otherwise, and when several handlers ran, it is forgotten after
 * the dispatch. A failure to forget only costs one more retrieve, which finds its runs done.
 */
export class WatchListSettlement implements PaymentsDispatchPlugin {
  readonly name = 'reconciliation';

  constructor(
    private readonly watchList: IntentWatchStore,
    private readonly terminalStates: ResolvedPaymentsReconcileOptions['terminalStates'],
    /** The instance's retrieve pace (`pacingOf`); without it, current-state retrieves are not paced. */
    private readonly pacing?: RetrievePacing,
  ) {}

  retrieveDelayMs(now: number): number {
    if (this.pacing === undefined) return 0;
    // No turn within the bound: none is reserved, and the delivery is answered 503 (redelivered later)
    // rather than held while the queue of retrieves grows with the webhook rate.
    if (this.pacing.nextStartAt - now > MAX_CURRENT_STATE_WAIT_MS) return Number.POSITIVE_INFINITY;
    return reserveRetrieve(this.pacing, now);
  }

  afterRetrieve(record: EventRecord, answer: RetrieveAnswer): void {
    // The answers a sweep acts on at once: a terminal state settles through the dispatch that follows
    // (afterDispatch, or the completion's unwatch); 404 means the service will never show it again.
    if (!('error' in answer) || !(answer.error instanceof PaymentsApiError) || answer.error.status !== 404) return;
    this.forgetQuietly(record.intentId!);
  }

  dispatchesRetrieved(kind: 'payment_intent' | 'setup_intent', state: string): boolean {
    return this.terminalStates[kind].has(state);
  }

  unwatches(record: EventRecord): boolean {
    return this.watchList.inRecords === true && this.terminal(record);
  }

  afterDispatch({ meta, record, outcome, results }: DispatchSummary): void {
    // The reconciler forgets what its own dispatches settle; a superseded delivery's dispatch is not its.
    if ((meta.source === 'reconciliation' && meta.supersedes === undefined) || !this.terminal(record)) return;
    if (outcome !== 'handled' && outcome !== 'duplicate') return;
    // One handler that ran: its completion ended the watch already.
    if (this.watchList.inRecords === true && results.length === 1 && outcome === 'handled') return;
    this.forgetQuietly(record.intentId!);
  }

  private forgetQuietly(intentId: string): void {
    try {
      const forgotten = this.watchList.forget(intentId);
      if (isPromiseLike(forgotten)) forgotten.then(undefined, () => undefined);
    } catch {
      // As above: the reconciler retrieves it once more and finds its runs done (or its 404).
    }
  }

  private terminal(record: EventRecord): boolean {
    return record.kind !== undefined && this.dispatchesRetrieved(record.kind, record.state!);
  }
}
