import { describe, expect, it } from '@jest/globals';
import { PaymentDeliveryJournal } from '../../../../lib/index.js';
import { type PaymentDeliveryRecord, type PaymentDispatchRecord } from '../../../../lib/webhooks/index.js';

const AT = new Date('2026-01-01T00:00:00Z');
const ID_A = '0f8e9c1a-4c1e-4a57-9f6b-2f3c9d41aaaa';
const ID_B = '0f8e9c1a-4c1e-4a57-9f6b-2f3c9d41bbbb';

const delivery = (eventId: string, outcome: string, status = 200): PaymentDeliveryRecord => ({
  eventId,
  type: 'payment_intent.succeeded',
  webhookId: '7b0e7f63-2f52-4c1e-9a57-0f6b2f3c9d41',
  status,
  outcome,
  receivedAt: AT,
});

const dispatch = (eventId: string, over: Partial<PaymentDispatchRecord> = {}): PaymentDispatchRecord => ({
  eventId,
  type: 'payment_intent.succeeded',
  outcome: 'handled',
  handlers: [{ handler: 'Orders.paid', status: 'done', durationMs: 3 }],
  receivedAt: AT,
  finishedAt: AT,
  ...over,
});

describe('PaymentDeliveryJournal', () => {
  it('merges the deliveries and dispatches of one event into one entry', () => {
    const journal = new PaymentDeliveryJournal();
    journal.onDispatch(
      dispatch(ID_A, {
        outcome: 'failed',
        handlers: [{ handler: 'Orders.paid', status: 'failed', error: 'Error: boom' }],
      }),
    );
    journal.onDelivery(delivery(ID_A, 'failed', 500));
    journal.onDispatch(dispatch(ID_A));
    journal.onDelivery(delivery(ID_A, 'handled'));

    const [entry, ...rest] = journal.entries();
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({
      eventId: ID_A,
      deliveries: 2,
      dispatches: 2,
      lastAnswer: { status: 200, outcome: 'handled' },
      lastDispatch: 'handled',
    });
    expect(entry!.handlers).toEqual([{ handler: 'Orders.paid', status: 'done', durationMs: 3 }]);
    expect(journal.totals()).toEqual({
      deliveries: 2,
      duplicatesDropped: 0,
      handlerRuns: 2,
      handlerFailures: 1,
      handlerSkips: 0,
      rejected: 0,
    });
  });

  it('counts a delivery answered "duplicate" as dropped, and skipped handlers as skips, not runs', () => {
    const journal = new PaymentDeliveryJournal();
    journal.onDispatch(
      dispatch(ID_A, { outcome: 'duplicate', handlers: [{ handler: 'Orders.paid', status: 'skipped' }] }),
    );
    journal.onDelivery(delivery(ID_A, 'duplicate'));
    expect(journal.totals()).toMatchObject({ duplicatesDropped: 1, handlerRuns: 0, handlerSkips: 1 });
  });

  it('lists the most recently touched event first and keeps at most maxEntries', () => {
    const journal = new PaymentDeliveryJournal({ maxEntries: 2 });
    const ids = ['a', 'b', 'c'].map((c) => ID_A.slice(0, -4) + c.repeat(4));
    for (const id of ids) journal.onDelivery(delivery(id, 'handled'));
    expect(journal.entries().map((e) => e.eventId)).toEqual([ids[2], ids[1]]);
    journal.onDelivery(delivery(ids[1]!, 'duplicate'));
    expect(journal.entries().map((e) => e.eventId)).toEqual([ids[1], ids[2]]);
    expect(journal.totals().deliveries).toBe(4);
  });

  it('keys events by their canonical (lower-case) id', () => {
    const journal = new PaymentDeliveryJournal();
    journal.onDelivery(delivery(ID_B.toUpperCase(), 'handled'));
    journal.onDispatch(dispatch(ID_B));
    expect(journal.entries()).toHaveLength(1);
    expect(journal.entry(ID_B.toUpperCase())?.dispatches).toBe(1);
  });

  it('hands out copies that later records do not change', () => {
    const journal = new PaymentDeliveryJournal();
    journal.onDispatch(dispatch(ID_A));
    const before = journal.entries()[0]!;
    journal.onDispatch(dispatch(ID_A, { outcome: 'failed', handlers: [] }));
    expect(before.lastDispatch).toBe('handled');
    expect(before.handlers).toHaveLength(1);
  });

  it('counts every rejection and keeps the last 50, newest first', () => {
    const journal = new PaymentDeliveryJournal();
    for (let i = 0; i < 60; i += 1) journal.onRejection({ status: i % 2 ? 401 : 413, reason: `r${i}`, at: AT });
    expect(journal.totals().rejected).toBe(60);
    const kept = journal.rejections();
    expect(kept).toHaveLength(50);
    expect(kept[0]).toEqual({ status: 401, reason: 'r59', at: AT });
    expect(kept.at(-1)!.reason).toBe('r10');
  });

  it('refuses a maxEntries that is not a positive integer', () => {
    expect(() => new PaymentDeliveryJournal({ maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => new PaymentDeliveryJournal({ maxEntries: 1.5 })).toThrow(/maxEntries/);
  });
});
