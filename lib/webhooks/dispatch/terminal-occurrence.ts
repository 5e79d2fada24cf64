import type { DispatchMeta } from '../contracts/dispatch-result.types.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import type { ResolvedPaymentsReconcileOptions } from '../contracts/payments-reconcile.options.js';
import { intentId } from '../handlers/payment-event.context.js';

/** The terminal states the receiver keys by occurrence: `webhooks.reconcile.terminalStates`, or these defaults. */
export type TerminalStates = ResolvedPaymentsReconcileOptions['terminalStates'];

/**
 * `meta` with the occurrence `kind:intentId:state` when `event` is an intent's state event naming a
 * valid intent (`payment_intent.succeeded` with `data.payment_intent.id`), else `meta` itself.
 *
 * Computed the same whatever the configuration (reconciliation on or off, any `terminalStates`): the
 * dispatcher checks a webhook's handlers under both its event id and its occurrence, so that no change
 * of configuration between releases makes a handled event look new. `terminal` only says which of the
 * two keys is kept after a run: a terminal state happens once per intent, so its occurrence stays done
 * (the reconciler's key); another state may recur, so its occurrence is only held while it runs.
 */
export function withOccurrence(event: PaymentEvent, meta: DispatchMeta, terminal: TerminalStates): DispatchMeta {
  if (meta.occurrence) return meta;
  const type = event.event;
  const kind = type.startsWith('payment_intent.')
    ? 'payment_intent'
    : type.startsWith('setup_intent.')
      ? 'setup_intent'
      : undefined;
  if (kind === undefined) return meta;
  const id = intentId((event.data as Record<string, unknown> | null)?.[kind]);
  if (id === undefined) return meta;
  const state = type.slice(kind.length + 1);
  const occurrence = { key: `${kind}:${id}:${state}`, kind, id, terminal: terminal[kind].has(state) } as const;
  // Written out, not `{ ...meta, occurrence }`: on Node 20 (V8 11.3) a spread followed by a property gives
  // every result a map of its own, so each later read of `meta` (four per dispatch) missed V8's caches
  // (`--log-ic`: 4 megamorphic misses per dispatch; Node 22 shares the map). `DispatchMeta` has these fields.
  return { receivedAt: meta.receivedAt, deliveryAttempt: meta.deliveryAttempt, source: meta.source, occurrence };
}
