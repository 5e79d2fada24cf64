import type { PaymentEvent } from '../contracts/payment-event.types.js';
import { isUuid, lowerCaseUuid } from '../../core/payments.uuid.js';
import type { EventRecord, RecordIntentKind } from '../contracts/event-record.types.js';
import type { HandledState } from '../contracts/idempotency-store.interface.js';

export type { EventRecord, RecordIntentKind } from '../contracts/event-record.types.js';

/**
 * A state as the service names them (`succeeded`, `requires_capture`, `errored_sale`): 1-64 of
 * `a-z 0-9 _`. An event type whose suffix is anything else keys its own record, so that nothing a
 * sender writes can reach a slot's separator or grow a key.
 */
const isStateName = (state: string): boolean => {
  if (state.length === 0 || state.length > 64) return false;
  for (let i = 0; i < state.length; i++) {
    const c = state.charCodeAt(i);
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95)) return false;
  }
  return true;
};

/** The canonical id of the intent `value` names (an object with a UUID `id`): lower case; else undefined. */
const intentIdOf = (value: unknown): string | undefined => {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return isUuid(id) ? lowerCaseUuid(id) : undefined;
};

/** The record key of intent `id` (canonical) for the instance whose store keys start with `prefix`. */
export function intentRecordKey(prefix: string, id: string): string {
  // Joined, not written as a template: V8 keeps a concatenation as a tree of its parts (a cons string),
  // and a store that keeps the key (the memory store, for days) would keep the tree; `join` is flat.
  return [prefix, 'i:', id].join('');
}

/** The record of `event` (see `EventRecord`). `prefix`: `''` for the unnamed instance, `'<name>:'` otherwise. */
export function eventRecordOf(event: PaymentEvent, prefix: string): EventRecord {
  const type = event.event;
  const kind: RecordIntentKind | undefined = type.startsWith('payment_intent.')
    ? 'payment_intent'
    : type.startsWith('setup_intent.')
      ? 'setup_intent'
      : undefined;
  if (kind !== undefined) {
    const id = intentIdOf((event.data as Record<string, unknown> | null)?.[kind]);
    const state = type.slice(kind.length + 1);
    if (id !== undefined && isStateName(state)) {
      return { key: intentRecordKey(prefix, id), state, kind, intentId: id };
    }
  }
  return { key: [prefix, 'e:', event.id].join(''), state: undefined, kind: undefined, intentId: undefined };
}

/** The record of the state `state` of intent `id`, for a run from a retrieve (reconciliation, current state). */
export function intentStateRecord(prefix: string, kind: RecordIntentKind, id: string, state: string): EventRecord {
  return { key: intentRecordKey(prefix, id), state, kind, intentId: id };
}

/** The slot of `handlerId`'s runs in `record`: `<state>|<handlerId>`, or `<handlerId>` in an event's record. */
export function runSlot(record: EventRecord, handlerId: string): string {
  return record.state === undefined ? handlerId : [record.state, '|', handlerId].join('');
}

/** The state of a slot of an intent's record (`succeeded|Shop.paid` -> `succeeded`), undefined in an event's record. */
export function stateOfSlot(slot: string): string | undefined {
  const bar = slot.indexOf('|');
  return bar < 0 ? undefined : slot.slice(0, bar);
}

/**
 * Whether the state of `slot` may come back for the same intent: a `requires_*` state asks for more
 * action, and may be asked again (each of its events runs its handlers once). Any other state runs a
 * handler once per intent, whichever event or retrieve brings it. Read from the state's name, never from
 * options: no configuration can make a handled state look new.
 */
export function recurs(slot: string): boolean {
  return slot.startsWith('requires_');
}

/**
 * A claim's `handled` from the latest completion (ms) of each completed slot of an intent's record:
 * one entry per `<state>|<handlerId>` slot, sorted by state then handler; slots of an event's record
 * (no `|`) are left out.
 */
export function handledOfSlots(latest: ReadonlyMap<string, number>): HandledState[] {
  const handled: HandledState[] = [];
  for (const [slot, at] of latest) {
    const bar = slot.indexOf('|');
    if (bar > 0) handled.push({ state: slot.slice(0, bar), handler: slot.slice(bar + 1), at });
  }
  return handled.sort((a, b) => order(a.state, b.state) || order(a.handler!, b.handler!));
}

const order = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
