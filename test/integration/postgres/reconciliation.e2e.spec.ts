import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import {
  OnPaymentEvent,
  pgTransactionRunner,
  PostgresIdempotencyStore,
  type PaymentEvent,
  type PaymentEventContext,
} from '../../../lib/index.js';
import { mixedRun, startReconcileShop, type ReconcileShop } from '../../fixtures/reconcile/reconcile-shop.fixture.js';
import { createTestDatabase, type TestDatabase } from './postgres-test.util.js';

/*
 * Reconciliation with the transactional inbox on PostgreSQL (issue 24): the handlers' effects are plain
 * INSERTs (no unique constraint), so a second run would show as a second row. Webhook and reconciler
 * claim the same (intent, state) key, and the inbox records it in the handler's own transaction.
 */
let db: TestDatabase;

@Injectable()
class InboxShop {
  @OnPaymentEvent('payment_intent.succeeded', { transactional: true })
  async fulfil(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    await ctx.transaction!.query('INSERT INTO fulfilments (intent_id, source) VALUES ($1, $2)', [
      String(event.data.payment_intent?.['id']),
      ctx.source,
    ]);
  }

  @OnPaymentEvent('payment_intent.cancelled', { transactional: true })
  async release(event: PaymentEvent<'payment_intent.cancelled'>, ctx: PaymentEventContext): Promise<void> {
    await ctx.transaction!.query('INSERT INTO releases (intent_id) VALUES ($1)', [
      String(event.data.payment_intent?.['id']),
    ]);
  }
}

describe('reconciliation with the PostgreSQL inbox', () => {
  let shop: ReconcileShop;

  beforeAll(async () => {
    db = await createTestDatabase('reconcile');
    await db.pool.query('CREATE TABLE fulfilments (intent_id text NOT NULL, source text NOT NULL)');
    await db.pool.query('CREATE TABLE releases (intent_id text NOT NULL)');
    shop = await startReconcileShop([InboxShop], {
      store: new PostgresIdempotencyStore(db.pool),
      transactions: { runner: pgTransactionRunner(db.pool) },
    });
  });
  afterAll(async () => {
    await shop?.close();
    await db?.drop();
  });

  it('30 orders, a third of the webhooks dropped and a third late: every paid order fulfilled exactly once, no cancelled one', async () => {
    const { paid, cancelled } = await mixedRun(shop, 30);
    const rows = (await db.pool.query('SELECT intent_id, source FROM fulfilments')).rows as Array<{
      intent_id: string;
      source: string;
    }>;
    const counts = new Map<string, number>();
    for (const row of rows) counts.set(row.intent_id, (counts.get(row.intent_id) ?? 0) + 1);
    expect(paid.filter((id) => counts.get(id) !== 1)).toEqual([]); // 0 unfulfilled, 0 double
    expect(cancelled.filter((id) => counts.has(id))).toEqual([]); // 0 effects for cancelled orders
    expect(rows).toHaveLength(paid.length);
    expect(new Set(rows.map((row) => row.source))).toEqual(new Set(['webhook', 'reconciliation']));
    const released = (await db.pool.query('SELECT intent_id FROM releases')).rows.map((row) => row['intent_id']);
    expect(released.sort()).toEqual([...cancelled].sort());
    // The watch list lives in the records, and is empty once every order settled.
    const watched = await db.pool.query(
      'SELECT count(*) AS n FROM payments_idempotency WHERE watch_next_ms IS NOT NULL',
    );
    expect(Number(watched.rows[0]!['n'])).toBe(0);
  });
});
