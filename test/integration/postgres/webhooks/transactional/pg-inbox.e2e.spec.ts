import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import {
  OnPaymentEvent,
  PaymentsConfigurationError,
  PaymentsModule,
  pgTransactionRunner,
  type PaymentEvent,
  type PaymentsTransactionRunner,
} from '../../../../../lib/index.js';
import { paymentsInboxSchema, type PaymentsTransactionsOptions } from '../../../../../lib/webhooks/index.js';
import { createPaymentEvent } from '../../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../../fixtures/webhooks/capturing.logger.js';
import { deferred } from '../../../../fixtures/webhooks/deferred.js';
import {
  fixtureOptions,
  post,
  sign,
  startWebhookApp,
  type AdapterName,
  type WebhookApp,
} from '../../../../fixtures/webhooks/webhook-app.fixture.js';
import { INBOX_KEY_OF, inboxKeys, LEDGER_SQL, LedgerHandler } from '../../pg-inbox.fixture.js';
import {
  createTestDatabase,
  createUnreachablePool,
  deadPort,
  waitFor,
  type TestDatabase,
} from '../../postgres-test.util.js';

const PATH = 'payments/webhooks';

describe.each(['express', 'fastify'] as const)(
  'transactional handlers with plain pg on %s (real PostgreSQL)',
  (adapter: AdapterName) => {
    let db: TestDatabase;
    const apps: WebhookApp[] = [];

    const start = async (
      transactions: Partial<PaymentsTransactionsOptions> = {},
      extra: { retentionSeconds?: number } = {},
    ) => {
      const logger = new CapturingLogger();
      const app = await startWebhookApp({
        adapter,
        logger,
        providers: [LedgerHandler],
        payments: PaymentsModule.forRoot(
          fixtureOptions({
            requireHttps: false,
            ...extra,
            transactions: { runner: pgTransactionRunner(db.pool), ...transactions },
          }),
        ),
      });
      apps.push(app);
      return { app, logger, url: `${app.baseUrl}/${PATH}`, handler: app.app.get(LedgerHandler) };
    };

    const ledger = async (eventId: string): Promise<number> =>
      Number((await db.pool.query('SELECT count(*) AS n FROM ledger WHERE event_id = $1', [eventId])).rows[0]!['n']);
    // The inbox records a terminal state's occurrence (`payment_intent:<intent>:succeeded:<handler>`),
    // the key the reconciler shares; another event's under its id.
    const inbox = async (event: PaymentEvent): Promise<number> =>
      Number(
        (await db.pool.query(`SELECT count(*) AS n FROM payments_inbox WHERE ${INBOX_KEY_OF}`, inboxKeys(event)))
          .rows[0]!['n'],
      );

    beforeAll(async () => {
      db = await createTestDatabase(`inbox_${adapter}`);
      await db.pool.query(LEDGER_SQL);
    });
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((app) => app.close()));
    });
    afterAll(async () => {
      await db?.drop();
    });

    it("commits the handler's INSERT and its completion record together (200), and a redelivery runs nothing", async () => {
      const { url, handler, logger } = await start();
      const event = createPaymentEvent('payment_intent.succeeded');
      expect((await post(url, sign(event))).status).toBe(200);
      expect(await ledger(event.id)).toBe(1);
      expect(await inbox(event)).toBe(1);
      expect((await post(url, sign(event))).status).toBe(200);
      expect(handler.runs).toEqual([event.id]);
      expect(await ledger(event.id)).toBe(1);
      // Log policy (docs/logging.md): a delivery that went well, and its redelivery, log nothing per delivery.
      expect(logger.lines.filter((line) => /^(Handled|Skipped) /.test(line.message))).toEqual([]);
      // The handler without { transactional: true } ran too, outside any transaction.
      expect(handler.sawTransaction).toEqual([false]);
    });

    it("sends the inbox's claim as a named prepared statement through pgTransactionRunner (the app's INSERT as text)", async () => {
      // One connection, so the session that ran the delivery is the one asked afterwards.
      const single = db.newPool({ max: 1 });
      const { url } = await start({ runner: pgTransactionRunner(single) });
      expect((await post(url, sign(createPaymentEvent('payment_intent.succeeded')))).status).toBe(200);
      const prepared = await single.query('SELECT name, statement FROM pg_prepared_statements');
      expect(prepared.rows.map((r) => String(r['name']).replace(/_[0-9a-f]{16}$/, ''))).toEqual([
        'payments_inbox_claim',
      ]);
      expect(String(prepared.rows[0]!['statement'])).toContain('pg_try_advisory_xact_lock');
    });

    it('rolls back the INSERT and the record when the handler throws (500); the redelivery runs it from a clean state', async () => {
      const { url, handler, logger } = await start();
      const event = createPaymentEvent('payment_intent.succeeded');
      handler.behaviour = () => {
        throw new Error('warehouse down');
      };
      expect((await post(url, sign(event))).status).toBe(500);
      expect(await ledger(event.id)).toBe(0);
      expect(await inbox(event)).toBe(0);
      expect(logger.messages('error').join('\n')).toContain('transaction rolled back');
      handler.behaviour = () => undefined;
      expect((await post(url, sign(event))).status).toBe(200);
      expect(handler.runs).toEqual([event.id, event.id]);
      expect(await ledger(event.id)).toBe(1);
    });

    it('[W4] lets exactly one of two instances (separate stores, one database) run a copy in flight: the other gets 409', async () => {
      // Two instances with their own in-memory stores: only the inbox keeps them apart.
      const first = await start();
      const second = await start();
      const event = createPaymentEvent('payment_intent.succeeded');
      const gate = deferred();
      first.handler.behaviour = () => gate.promise;
      const inFlight = post(first.url, sign(event));
      await waitFor(() => (first.handler.runs.length === 1 ? true : undefined), {
        what: 'the first copy to be inside its handler',
      });
      expect((await post(second.url, sign(event))).status).toBe(409);
      gate.resolve();
      expect((await inFlight).status).toBe(200);
      // The redelivery to the second instance finds the committed record: 200, handler not run.
      expect((await post(second.url, sign(event))).status).toBe(200);
      expect(second.handler.runs).toEqual([]);
      expect(await ledger(event.id)).toBe(1);
    });

    it('[W4] runs a handler once for 20 concurrent copies spread over 2 instances', async () => {
      const a = await start();
      const b = await start();
      const event = createPaymentEvent('payment_intent.succeeded');
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post((i % 2 ? a : b).url, sign(event))));
      expect(answers.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
      expect(answers.every((r) => r.status === 200 || r.status === 409)).toBe(true);
      // The service redelivers the 409s: afterwards every copy is acknowledged, and the ledger has one row.
      expect((await post(a.url, sign(event))).status).toBe(200);
      expect((await post(b.url, sign(event))).status).toBe(200);
      expect(a.handler.runs.length + b.handler.runs.length).toBe(1);
      expect(await ledger(event.id)).toBe(1);
    });

    it('answers 503 and runs nothing when the database is unreachable; the redelivery after it returns runs once', async () => {
      const port = await deadPort();
      let down = true;
      const pool = db.newPool();
      const outage = createUnreachablePool(port);
      const live = pgTransactionRunner(pool);
      const dead = pgTransactionRunner(outage);
      const runner: PaymentsTransactionRunner = { run: (work) => (down ? dead : live).run(work) };
      const { url, handler, logger } = await start({ runner });
      const event = createPaymentEvent('payment_intent.succeeded');
      expect((await post(url, sign(event))).status).toBe(503);
      expect(handler.runs).toEqual([]);
      expect(logger.text()).not.toContain('sk_test_');
      down = false;
      expect((await post(url, sign(event))).status).toBe(200);
      expect(handler.runs).toEqual([event.id]);
      expect(await ledger(event.id)).toBe(1);
      await outage.end();
    });

    it('answers 503 and keeps nothing when the connection dies inside the handler (before COMMIT)', async () => {
      const pool = db.newPool({ max: 2 });
      const { url, handler } = await start({ runner: pgTransactionRunner(pool) });
      const event = createPaymentEvent('payment_intent.succeeded');
      handler.behaviour = async () => {
        // Another session kills this transaction's backend: the database is gone mid-handler.
        await db.pool.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle in transaction'`,
        );
      };
      const answer = await post(url, sign(event));
      expect([500, 503]).toContain(answer.status);
      expect(await ledger(event.id)).toBe(0);
      expect(await inbox(event)).toBe(0);
      handler.behaviour = () => undefined;
      expect((await post(url, sign(event))).status).toBe(200);
      expect(await ledger(event.id)).toBe(1);
    });

    it("runs every handler in a transaction with handlers: 'all', except one declared { transactional: false }", async () => {
      @Injectable()
      class AllHandlers {
        seen: Record<string, boolean> = {};
        @OnPaymentEvent('payment_intent.canceled' as 'payment_intent.cancelled', 'payment_intent.cancelled')
        implicit(_event: PaymentEvent, ctx: { transaction?: unknown }): void {
          this.seen['implicit'] = ctx.transaction !== undefined;
        }
        @OnPaymentEvent('payment_intent.cancelled', { transactional: false })
        optedOut(_event: PaymentEvent, ctx: { transaction?: unknown }): void {
          this.seen['optedOut'] = ctx.transaction !== undefined;
        }
      }
      const logger = new CapturingLogger();
      const app = await startWebhookApp({
        adapter,
        logger,
        providers: [AllHandlers],
        payments: PaymentsModule.forRoot(
          fixtureOptions({
            requireHttps: false,
            transactions: { runner: pgTransactionRunner(db.pool), handlers: 'all' },
          }),
        ),
      });
      apps.push(app);
      const event = createPaymentEvent('payment_intent.cancelled');
      expect((await post(`${app.baseUrl}/${PATH}`, sign(event))).status).toBe(200);
      expect(app.app.get(AllHandlers).seen).toEqual({ implicit: true, optedOut: false });
      expect(await inbox(event)).toBe(1);
    });

    it('forgets a completion record after the retention: it expires, and the clean-up deletes it', async () => {
      const { app, url } = await start({ cleanupEvery: 0 }, { retentionSeconds: 1 });
      const event = createPaymentEvent('payment_intent.succeeded');
      expect((await post(url, sign(event))).status).toBe(200);
      const row = (
        await db.pool.query(
          `SELECT extract(epoch FROM expires_at - completed_at) AS s FROM payments_inbox WHERE ${INBOX_KEY_OF}`,
          inboxKeys(event),
        )
      ).rows[0]!;
      expect(Number(row['s'])).toBeCloseTo(1, 1);
      const { PaymentsInbox } = await import('../../../../../lib/webhooks/index.js');
      const inboxService = app.app.get(PaymentsInbox);
      await waitFor(
        async () => ((await inboxService.deleteExpired()) > 0 || (await inbox(event)) === 0 ? true : undefined),
        { what: 'the record to expire' },
      );
      expect(await inbox(event)).toBe(0);
    });

    it('takes over an expired record that the clean-up has not deleted yet: the redelivery runs the handler again', async () => {
      // Two instances with their own memory stores, so the redelivery reaches the inbox of the second.
      const first = await start({ cleanupEvery: 0 });
      const second = await start({ cleanupEvery: 0 });
      const event = createPaymentEvent('payment_intent.succeeded');
      expect((await post(first.url, sign(event))).status).toBe(200);
      // While the record is live, the second instance's claim finds it: 200, nothing run.
      expect((await post(second.url, sign(event))).status).toBe(200);
      expect(second.handler.runs).toEqual([]);
      await db.pool.query(
        `UPDATE payments_inbox SET expires_at = clock_timestamp() - interval '1 second' WHERE ${INBOX_KEY_OF}`,
        inboxKeys(event),
      );
      const third = await start({ cleanupEvery: 0 });
      expect((await post(third.url, sign(event))).status).toBe(200);
      expect(third.handler.runs).toEqual([event.id]);
      expect(await ledger(event.id)).toBe(2);
      // One record, live again.
      const live = await db.pool.query(
        `SELECT count(*) AS n FROM payments_inbox WHERE (${INBOX_KEY_OF}) AND expires_at > clock_timestamp()`,
        inboxKeys(event),
      );
      expect(Number(live.rows[0]!['n'])).toBe(1);
      expect(await inbox(event)).toBe(1);
    });

    it('refuses to boot when a handler is declared { transactional: true } but webhooks.transactions is missing', async () => {
      const logger = new CapturingLogger();
      await expect(
        startWebhookApp({
          adapter,
          logger,
          providers: [LedgerHandler],
          payments: PaymentsModule.forRoot(fixtureOptions({ requireHttps: false })),
        }),
      ).rejects.toThrow(PaymentsConfigurationError);
    });

    it('refuses a runner that is not a PaymentsTransactionRunner, naming the option', async () => {
      const logger = new CapturingLogger();
      await expect(
        startWebhookApp({
          adapter,
          logger,
          payments: PaymentsModule.forRoot(
            fixtureOptions({ transactions: { runner: {} as PaymentsTransactionRunner } }),
          ),
        }),
      ).rejects.toThrow(/webhooks\.transactions\.runner/);
    });

    it('uses an inbox table that migrations created (createTable: false, schema-qualified)', async () => {
      await db.pool.query('CREATE SCHEMA IF NOT EXISTS shop');
      await db.pool.query(paymentsInboxSchema('shop.inbox'));
      const { url } = await start({ table: 'shop.inbox', createTable: false });
      const event = createPaymentEvent('payment_intent.succeeded');
      expect((await post(url, sign(event))).status).toBe(200);
      expect(
        Number(
          (await db.pool.query(`SELECT count(*) AS n FROM shop.inbox WHERE ${INBOX_KEY_OF}`, inboxKeys(event)))
            .rows[0]!['n'],
        ),
      ).toBe(1);
    });
  },
);
