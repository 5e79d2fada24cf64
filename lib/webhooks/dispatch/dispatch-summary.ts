import type { PaymentEventHandlerRegistration } from '../contracts/payment-event-handler.types.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import type { DispatchHandlerResult, DispatchOutcome } from '../contracts/dispatch-result.types.js';

/** One handler's run of one event: what its claim, completion and log lines need. */
export interface HandlerRun {
  readonly handler: PaymentEventHandlerRegistration;
  readonly event: PaymentEvent;
  /** The record the run is kept in (`[<instance>:]i:<intent id>` or `[<instance>:]e:<event id>`). */
  readonly key: string;
  /** Its slot there: `<state>|<handlerId>`, or `<handlerId>` in an event's record. */
  readonly slot: string;
  /** The event a webhook runs it for; undefined for a run from a retrieve of the intent. */
  readonly eventId: string | undefined;
  /** The completion also ends the intent's watch (a terminal state, this release's reconciliation). */
  readonly unwatch: boolean;
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

/**
 * The worst status wins: store_unavailable > retrieve_failed > failed > busy > gone > superseded >
 * handled; all skipped is a duplicate. One pass.
 */
export function aggregate(results: DispatchHandlerResult[]): DispatchOutcome {
  let failed = false;
  let busy = false;
  let allSkipped = true;
  let retrieveFailed = false;
  let gone = false;
  let superseded = false;
  for (const { status } of results) {
    if (status === 'store_unavailable') return 'store_unavailable';
    if (status === 'failed') failed = true;
    else if (status === 'busy') busy = true;
    else if (status === 'retrieve_failed') retrieveFailed = true;
    else if (status === 'superseded') superseded = true;
    else if (status === 'gone') gone = true;
    if (status !== 'skipped') allSkipped = false;
  }
  if (retrieveFailed) return 'retrieve_failed';
  if (failed) return 'failed';
  if (busy) return 'busy';
  if (gone) return 'gone';
  if (superseded) return 'superseded';
  return allSkipped ? 'duplicate' : 'handled';
}

/** Name and message of an error, for a log line (handlers' errors are the merchant's own text). */
export function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error;
}
