import { isPromiseLike } from '../../core/payments.pending.js';
import type { DispatchSummary, PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
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
  ) {}

  unwatches(record: EventRecord): boolean {
    return this.watchList.inRecords === true && this.terminal(record);
  }

  afterDispatch({ meta, record, outcome, results }: DispatchSummary): void {
    if (meta.source === 'reconciliation' || !this.terminal(record)) return;
    if (outcome !== 'handled' && outcome !== 'duplicate') return;
    // One handler that ran: its completion ended the watch already.
    if (this.watchList.inRecords === true && results.length === 1 && outcome === 'handled') return;
    try {
      const forgotten = this.watchList.forget(record.intentId!);
      if (isPromiseLike(forgotten)) forgotten.then(undefined, () => undefined);
    } catch {
      // As above: the reconciler retrieves it once more and finds its runs done.
    }
  }

  private terminal(record: EventRecord): boolean {
    return record.kind !== undefined && this.terminalStates[record.kind].has(record.state!);
  }
}
