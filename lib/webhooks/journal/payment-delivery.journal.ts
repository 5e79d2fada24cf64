import { PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import type { DispatchHandlerStatus, DispatchOutcome } from '../contracts/dispatch-result.types.js';
import { STORE_ARGUMENT_MESSAGES } from '../contracts/payments-webhooks.messages.js';
import type {
  PaymentDeliveryListener,
  PaymentDeliveryRecord,
  PaymentDispatchHandlerRecord,
  PaymentDispatchRecord,
  PaymentRejectionRecord,
} from '../contracts/payment-delivery-listener.interface.js';

/** Options of `new PaymentDeliveryJournal(options)`. */
export interface PaymentDeliveryJournalOptions {
  /** Events kept; the oldest is dropped beyond it. Default 200. */
  maxEntries?: number;
}

/** What the journal knows of one event, across its deliveries and dispatches. */
export interface PaymentDeliveryJournalEntry {
  eventId: string;
  type: string;
  /** First time a delivery or dispatch of this event was seen. */
  firstSeenAt: Date;
  /** Last time anything happened to this event. */
  lastSeenAt: Date;
  /** Verified deliveries of this event (redeliveries and duplicates included). */
  deliveries: number;
  /** Status and outcome of the last delivery's answer; undefined if only a worker dispatched it. */
  lastAnswer: { status: number; outcome: string } | undefined;
  /** Dispatches to the handlers (each queue attempt or inline delivery that reached them). */
  dispatches: number;
  /** Outcome of the last dispatch; undefined while none ran (e.g. still queued). */
  lastDispatch: DispatchOutcome | undefined;
  /** Each handler's result in the last dispatch. */
  handlers: PaymentDispatchHandlerRecord[];
}

/** Totals since the journal was created (not bounded by `maxEntries`). */
export interface PaymentDeliveryJournalTotals {
  /** Verified deliveries answered. */
  deliveries: number;
  /** Deliveries answered as a duplicate of an event already handled or queued (dropped). */
  duplicatesDropped: number;
  /** Handler runs (status `done` or `failed`). */
  handlerRuns: number;
  /** Handler runs that threw. */
  handlerFailures: number;
  /** Handler calls skipped because the handler had already completed the event. */
  handlerSkips: number;
  /** Deliveries refused before their event was trusted (bad signature, oversized, malformed...). */
  rejected: number;
}

/** Rejections kept by `rejections()` (the totals count them all). */
const REJECTIONS_KEPT = 50;

const RUN_STATUSES: ReadonlySet<DispatchHandlerStatus> = new Set<DispatchHandlerStatus>(['done', 'failed']);

/**
 * A bounded, in-memory journal of recent deliveries and handler runs, for an operator page or a test.
 * Pass it as `webhooks.deliveryListener` and read it with `entries()` / `totals()`. It keeps the last
 * `maxEntries` events of this process only (a restart empties it); it is a view, not an audit log.
 *
 * @example
 * const journal = new PaymentDeliveryJournal({ maxEntries: 100 });
 * PaymentsModule.forRoot({ ..., webhooks: { verifier, deliveryListener: journal } });
 * journal.entries(); // newest first
 */
export class PaymentDeliveryJournal implements PaymentDeliveryListener {
  readonly #maxEntries: number;
  /** Insertion order = least recently touched first. */
  readonly #entries = new Map<string, PaymentDeliveryJournalEntry>();
  readonly #totals: PaymentDeliveryJournalTotals = {
    deliveries: 0,
    duplicatesDropped: 0,
    handlerRuns: 0,
    handlerFailures: 0,
    handlerSkips: 0,
    rejected: 0,
  };
  readonly #rejections: PaymentRejectionRecord[] = [];

  constructor(options: PaymentDeliveryJournalOptions = {}) {
    const max = options.maxEntries ?? 200;
    if (!Number.isInteger(max) || max < 1) {
      throw new PaymentsInvalidArgumentError(
        'PaymentDeliveryJournal',
        'maxEntries',
        STORE_ARGUMENT_MESSAGES.maxEntries,
      );
    }
    this.#maxEntries = max;
  }

  /** @inheritdoc */
  onDelivery(record: PaymentDeliveryRecord): void {
    const entry = this.#touch(record.eventId, record.type, record.receivedAt);
    entry.deliveries += 1;
    entry.lastAnswer = { status: record.status, outcome: record.outcome };
    this.#totals.deliveries += 1;
    if (record.outcome === 'duplicate') this.#totals.duplicatesDropped += 1;
  }

  /** @inheritdoc */
  onDispatch(record: PaymentDispatchRecord): void {
    const entry = this.#touch(record.eventId, record.type, record.finishedAt);
    entry.dispatches += 1;
    entry.lastDispatch = record.outcome;
    entry.handlers = record.handlers.map((h) => ({ ...h }));
    for (const handler of record.handlers) {
      if (RUN_STATUSES.has(handler.status)) this.#totals.handlerRuns += 1;
      if (handler.status === 'failed') this.#totals.handlerFailures += 1;
      if (handler.status === 'skipped') this.#totals.handlerSkips += 1;
    }
  }

  /** @inheritdoc */
  onRejection(record: PaymentRejectionRecord): void {
    this.#totals.rejected += 1;
    this.#rejections.push({ status: record.status, reason: record.reason, at: record.at });
    if (this.#rejections.length > REJECTIONS_KEPT) this.#rejections.shift();
  }

  /** The last 50 refused deliveries, newest first (status, reason, time: nothing of the request). */
  rejections(): PaymentRejectionRecord[] {
    return this.#rejections.map((r) => ({ ...r })).reverse();
  }

  /** Recent events, most recently touched first; copies, safe to serialise. */
  entries(limit = this.#maxEntries): PaymentDeliveryJournalEntry[] {
    const all = [...this.#entries.values()].reverse().slice(0, Math.max(0, limit));
    return all.map((e) => ({
      ...e,
      lastAnswer: e.lastAnswer && { ...e.lastAnswer },
      handlers: e.handlers.map((h) => ({ ...h })),
    }));
  }

  /** The entry of one event, if it is still kept. */
  entry(eventId: string): PaymentDeliveryJournalEntry | undefined {
    return this.entries().find((e) => e.eventId === eventId.toLowerCase());
  }

  /** Totals since creation. */
  totals(): PaymentDeliveryJournalTotals {
    return { ...this.#totals };
  }

  #touch(eventId: string, type: string, at: Date): PaymentDeliveryJournalEntry {
    const id = eventId.toLowerCase();
    let entry = this.#entries.get(id);
    if (entry === undefined) {
      entry = {
        eventId: id,
        type,
        firstSeenAt: at,
        lastSeenAt: at,
        deliveries: 0,
        lastAnswer: undefined,
        dispatches: 0,
        lastDispatch: undefined,
        handlers: [],
      };
    } else {
      this.#entries.delete(id);
      entry.lastSeenAt = at;
    }
    this.#entries.set(id, entry);
    while (this.#entries.size > this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return entry;
  }
}
