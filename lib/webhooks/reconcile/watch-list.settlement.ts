import { isPromiseLike } from '../../core/payments.pending.js';
import type { DispatchSummary, PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import type { IntentWatchStore } from '../contracts/intent-watch-store.interface.js';

/**
 * Reconciliation's hook after a dispatch: a webhook that settled a watched intent's terminal state
 * (its handlers ran now or earlier) means the reconciler need not retrieve it; the intent is forgotten.
 * A failure to forget only costs one more retrieve, which finds its claims done.
 */
export class WatchListSettlement implements PaymentsDispatchPlugin {
  readonly name = 'reconciliation';

  constructor(private readonly watchList: IntentWatchStore) {}

  afterDispatch({ meta, outcome }: DispatchSummary): void {
    const occurrence = meta.occurrence;
    if (
      occurrence?.terminal !== true ||
      meta.source === 'reconciliation' ||
      (outcome !== 'handled' && outcome !== 'duplicate')
    )
      return;
    try {
      const forgotten = this.watchList.forget(occurrence.id);
      if (isPromiseLike(forgotten)) forgotten.then(undefined, () => undefined);
    } catch {
      // As above: the reconciler retrieves it once more and finds its claims done.
    }
  }
}
