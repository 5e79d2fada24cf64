/** The two kinds of intent whose state events share a record per intent. */
export type RecordIntentKind = 'payment_intent' | 'setup_intent';

/**
 * The record an event's runs are kept in, as the dispatcher computes it once per dispatch:
 * - an intent's state event (`payment_intent.<state>`, `setup_intent.<state>` whose `data` names a
 *   valid intent): the intent's record, `[<instance>:]i:<intent id>`, and that state;
 * - any other event: its own record, `[<instance>:]e:<event id>`.
 *
 * The key never depends on options (reconciliation on or off, terminal states): no configuration change
 * between releases can make a handled state look new.
 */
export interface EventRecord {
  readonly key: string;
  /** The intent's state the event signals; undefined for an event's own record. */
  readonly state: string | undefined;
  readonly kind: RecordIntentKind | undefined;
  /** The intent's canonical id (lower case); undefined for an event's own record. */
  readonly intentId: string | undefined;
}
