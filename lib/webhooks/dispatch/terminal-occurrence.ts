import type { DispatchMeta } from '../contracts/dispatch-result.types.js';
import type { IntentWatchStore } from '../contracts/intent-watch-store.interface.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import type { ResolvedPaymentsReconcileOptions } from '../contracts/payments-reconcile.options.js';
import { intentId } from '../handlers/payment-event.context.js';

/**
 * `meta` with the occurrence of a terminal state when `event` signals one (`payment_intent.succeeded`
 * naming its intent, with `succeeded` among the terminal states), else `meta` itself. A terminal state
 * happens once per intent, so `kind:intentId:state` names it whichever path (webhook or reconciler)
 * brings it; an event whose `data` names no intent keeps its event id.
 */
export function withOccurrence(
  event: PaymentEvent,
  meta: DispatchMeta,
  terminal: ResolvedPaymentsReconcileOptions['terminalStates'],
): DispatchMeta {
  if (meta.occurrence) return meta;
  const dot = event.event.indexOf('.');
  const kind = event.event.slice(0, dot);
  if (kind !== 'payment_intent' && kind !== 'setup_intent') return meta;
  const state = event.event.slice(dot + 1);
  if (!terminal[kind].has(state)) return meta;
  const id = intentId((event.data as Record<string, unknown>)[kind]);
  if (id === undefined) return meta;
  return { ...meta, occurrence: { key: `${kind}:${id}:${state}`, kind, id } };
}

/** Stops watching `id`; a failure only means one more retrieve later (the claim still dedupes it). */
export function forgetQuietly(watchList: IntentWatchStore | undefined, id: string): void {
  if (!watchList) return;
  try {
    const forgotten = watchList.forget(id);
    if (forgotten && typeof (forgotten as PromiseLike<void>).then === 'function') {
      (forgotten as PromiseLike<void>).then(undefined, () => undefined);
    }
  } catch {
    // As above: the reconciler retrieves it once more and finds its claims done.
  }
}
