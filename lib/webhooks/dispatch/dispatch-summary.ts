import type { PaymentEventHandlerRegistration } from '../contracts/payment-event-handler.types.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import type { DispatchHandlerResult, DispatchOutcome } from '../contracts/dispatch-result.types.js';

/** One handler's run of one event: what its claim, completion and log lines need. */
export interface HandlerRun {
  handler: PaymentEventHandlerRegistration;
  event: PaymentEvent;
  /**
   * The idempotency key the run is claimed under: `[instance:]eventId:handlerId`, or for an intent's
   * terminal state `[instance:]kind:intentId:state:handlerId` (see `DispatchMeta.occurrence`).
   */
  key: string;
  /**
   * A webhook's intent-state event is claimed under both keys: the other one, with its lease token once
   * claimed, and whether it stays done after a successful run (an occurrence of a state that may recur
   * is only held while the handler runs).
   */
  second?: { key: string; token: string; keep: boolean };
  /** Completed after a successful run of a state that may recur: `kind:intentId:state:seen:handlerId`. */
  seen?: string;
}

/** `event <id> (<type>) handler <id>`, for the lines about one handler's run (built only when logged). */
export function whereOf(event: PaymentEvent, handler: PaymentEventHandlerRegistration): string {
  return `event ${event.id} (${event.event}) handler ${handler.id}`;
}

/** The `logDeliveries` line: `Event <id> (<type>) <outcome>: <handler> <status> [in N ms] [(attempt n)], ...`. */
export function deliveryLine(
  event: PaymentEvent,
  outcome: DispatchOutcome,
  results: readonly DispatchHandlerResult[],
): string {
  const parts = results.map((r) => {
    const took = r.durationMs === undefined ? '' : ` in ${r.durationMs} ms`;
    const attempt = r.attempt === undefined || r.attempt === 1 ? '' : ` (attempt ${r.attempt})`;
    return `${r.handler} ${r.status}${took}${attempt}`;
  });
  return `Event ${event.id} (${event.event}) ${outcome}: ${parts.join(', ')}`;
}

/** The worst status wins: store_unavailable > failed > busy > handled; all skipped is a duplicate. One pass. */
export function aggregate(results: DispatchHandlerResult[]): DispatchOutcome {
  let failed = false;
  let busy = false;
  let allSkipped = true;
  for (const { status } of results) {
    if (status === 'store_unavailable') return 'store_unavailable';
    if (status === 'failed') failed = true;
    else if (status === 'busy') busy = true;
    if (status !== 'skipped') allSkipped = false;
  }
  if (failed) return 'failed';
  if (busy) return 'busy';
  return allSkipped ? 'duplicate' : 'handled';
}

/** Name and message of an error, for a log line (handlers' errors are the merchant's own text). */
export function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error;
}
