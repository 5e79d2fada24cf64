import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import {
  OnPaymentEvent,
  PaymentsModule,
  PostgresIdempotencyStore,
  pgTransactionRunner,
  type PaymentEvent,
  type PaymentEventContext,
} from '../../../../../lib/index.js';
import { createPaymentEvent } from '../../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../../fixtures/webhooks/capturing.logger.js';
import {
  fixtureOptions,
  post,
  sign,
  startWebhookApp,
  type WebhookApp,
} from '../../../../fixtures/webhooks/webhook-app.fixture.js';
import { createTestDatabase, type TestDatabase } from '../../postgres-test.util.js';

/*
 * The two guards docs/webhooks.md#events-out-of-order shows, as a shop writes them, on real
 * PostgreSQL with the PostgreSQL store and plain-pg transactional handlers: the one-line guard on
 * `ctx.handled` (what the intent's record knows, from the claim), and the compare-and-set whose
 * `rowCount` tells whether it changed anything.
 */

const intentOf = (event: PaymentEvent): string => (event.data as { payment_intent: { id: string } }).payment_intent.id;

@Injectable()
class Fulfilment {
  readonly seen: { event: string; handled: PaymentEventContext['handled']; rowCount?: number | null }[] = [];

  @OnPaymentEvent('payment_intent.succeeded', { transactional: true })
  async paid(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    const { rowCount } = await ctx.transaction!.query(
      "UPDATE orders SET status = 'paid' WHERE intent_id = $1 AND status IN ('pending', 'authorised')",
      [intentOf(event)],
    );
    this.seen.push({ event: event.event, handled: ctx.handled, rowCount });
  }

  @OnPaymentEvent('payment_intent.requires_capture', { transactional: true })
  async authorised(event: PaymentEvent<'payment_intent.requires_capture'>, ctx: PaymentEventContext): Promise<void> {
    this.seen.push({ event: event.event, handled: ctx.handled });
    if (ctx.handled?.some((h) => h.state === 'succeeded')) return;
    await ctx.transaction!.query(
      "UPDATE orders SET status = 'authorised' WHERE intent_id = $1 AND status = 'pending'",
      [intentOf(event)],
    );
  }

  @OnPaymentEvent('payment_intent.errored_capture', { transactional: true })
  async captureFailed(event: PaymentEvent<'payment_intent.errored_capture'>, ctx: PaymentEventContext): Promise<void> {
    // A real failure after succeeded reaches the handler: the library invents no state order.
    const { rowCount } = await ctx.transaction!.query(
      "UPDATE orders SET status = 'capture_failed' WHERE intent_id = $1 AND status IN ('authorised', 'paid')",
      [intentOf(event)],
    );
    this.seen.push({ event: event.event, handled: ctx.handled, rowCount });
  }
}

describe('out-of-order guards with the PostgreSQL store and plain pg (real PostgreSQL)', () => {
  let db: TestDatabase;
  let app: WebhookApp;
  let url: string;
  let fulfilment: Fulfilment;

  beforeAll(async () => {
    db = await createTestDatabase('ooo_guards');
    await db.pool.query('CREATE TABLE orders (intent_id text PRIMARY KEY, status text NOT NULL)');
    app = await startWebhookApp({
      adapter: 'express',
      logger: new CapturingLogger(),
      providers: [Fulfilment],
      payments: PaymentsModule.forRoot(
        fixtureOptions({
          requireHttps: false,
          store: new PostgresIdempotencyStore(db.pool, { table: 'ooo_idempotency' }),
          transactions: { runner: pgTransactionRunner(db.pool) },
        }),
      ),
    });
    url = `${app.baseUrl}/payments/webhooks`;
    fulfilment = app.app.get(Fulfilment);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const status = async (intent: string): Promise<string> =>
    (await db.pool.query('SELECT status FROM orders WHERE intent_id = $1', [intent])).rows[0]!['status'] as string;

  it('a late requires_capture after succeeded sees it in ctx.handled and leaves the paid order alone', async () => {
    const paid = createPaymentEvent('payment_intent.succeeded');
    const intent = intentOf(paid);
    await db.pool.query("INSERT INTO orders VALUES ($1, 'pending')", [intent]);
    fulfilment.seen.length = 0;

    expect((await post(url, sign(paid))).status).toBe(200);
    const late = createPaymentEvent('payment_intent.requires_capture', { data: { payment_intent: { id: intent } } });
    expect((await post(url, sign(late))).status).toBe(200);

    expect(await status(intent)).toBe('paid');
    expect(fulfilment.seen[0]).toEqual({ event: 'payment_intent.succeeded', handled: [], rowCount: 1 });
    expect(fulfilment.seen[1]).toEqual({
      event: 'payment_intent.requires_capture',
      handled: [{ state: 'succeeded', handler: 'Fulfilment.paid', at: expect.any(Date) }],
    });
    const at = fulfilment.seen[1]!.handled![0]!.at.getTime();
    expect(Math.abs(at - Date.now())).toBeLessThan(60_000);
  });

  it('a late succeeded after errored_capture changes nothing: its compare-and-set answers rowCount 0', async () => {
    const authorised = createPaymentEvent('payment_intent.requires_capture');
    const intent = intentOf(authorised);
    await db.pool.query("INSERT INTO orders VALUES ($1, 'pending')", [intent]);
    fulfilment.seen.length = 0;

    expect((await post(url, sign(authorised))).status).toBe(200);
    expect(await status(intent)).toBe('authorised');
    const failed = createPaymentEvent('payment_intent.errored_capture', { data: { payment_intent: { id: intent } } });
    expect((await post(url, sign(failed))).status).toBe(200);
    expect(await status(intent)).toBe('capture_failed');
    const paid = createPaymentEvent('payment_intent.succeeded', { data: { payment_intent: { id: intent } } });
    expect((await post(url, sign(paid))).status).toBe(200);

    expect(await status(intent)).toBe('capture_failed');
    expect(fulfilment.seen.map((s) => [s.event, s.rowCount, s.handled?.map((h) => h.state)])).toEqual([
      ['payment_intent.requires_capture', undefined, []],
      ['payment_intent.errored_capture', 1, ['requires_capture']],
      ['payment_intent.succeeded', 0, ['errored_capture', 'requires_capture']],
    ]);
  });
});
