import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Queue } from 'bullmq';
import { PaymentsModule, PostgresIdempotencyStore, pgTransactionRunner } from '../../../lib/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import type { PaymentEvent } from '../../../lib/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import {
  fixtureOptions,
  post,
  sign,
  startWebhookApp,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';
import { REDIS_URL, uniqueQueueName } from '../redis-test.util.js';
import { INBOX_KEY_OF, inboxKeys, LEDGER_SQL, LedgerHandler } from './pg-inbox.fixture.js';
import { createTestDatabase, waitFor, type TestDatabase } from './postgres-test.util.js';

const PATH = 'payments/webhooks';

/**
 * Queued mode (`processing: { queue }`, BullMQ on the real Redis) with a transactional handler on the
 * real PostgreSQL: the worker runs the handler through the same inbox as inline mode.
 */
describe('transactional handlers in queued mode (BullMQ worker, real PostgreSQL and Redis)', () => {
  let db: TestDatabase;
  const apps: WebhookApp[] = [];
  const queueNames: string[] = [];

  const start = async () => {
    const name = uniqueQueueName('pg-inbox');
    queueNames.push(name);
    const logger = new CapturingLogger();
    const app = await startWebhookApp({
      adapter: 'express',
      logger,
      providers: [LedgerHandler],
      payments: PaymentsModule.forRoot(
        fixtureOptions({
          requireHttps: false,
          store: new PostgresIdempotencyStore(db.pool),
          processing: {
            queue: { connection: { url: REDIS_URL }, name, attempts: 5, backoff: { type: 'fixed', delay: 20 } },
          },
          transactions: { runner: pgTransactionRunner(db.pool) },
        }),
      ),
    });
    apps.push(app);
    return { url: `${app.baseUrl}/${PATH}`, handler: app.app.get(LedgerHandler), queue: name, logger };
  };

  const committed = async (table: 'ledger' | 'payments_inbox', event: PaymentEvent): Promise<number> => {
    const [where, values] = table === 'ledger' ? ['event_id = $1', [event.id]] : [INBOX_KEY_OF, inboxKeys(event)];
    return Number((await db.pool.query(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, values)).rows[0]!['n']);
  };

  const jobState = async (queue: string, jobId: string): Promise<string> => {
    const inspector = new Queue(queue, { connection: { url: REDIS_URL } });
    try {
      return await inspector.getJobState(jobId);
    } finally {
      await inspector.close();
    }
  };
  const completed = (queue: string, jobId: string) =>
    waitFor(async () => ((await jobState(queue, jobId)) === 'completed' ? true : undefined), {
      what: `job ${jobId} to complete`,
    });

  beforeAll(async () => {
    db = await createTestDatabase('inbox_queued');
    await db.pool.query(LEDGER_SQL);
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    for (const name of queueNames.splice(0)) {
      const cleaner = new Queue(name, { connection: { url: REDIS_URL } });
      await cleaner.obliterate({ force: true });
      await cleaner.close();
    }
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("[W3] answers 200 enqueued; the worker commits the handler's INSERT and its inbox record together", async () => {
    const { url, handler, queue } = await start();
    const event = createPaymentEvent('payment_intent.succeeded');
    const answer = await post(url, sign(event));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ outcome: 'enqueued' });
    await completed(queue, event.id);
    expect(handler.runs).toEqual([event.id]);
    expect(await committed('ledger', event)).toBe(1);
    expect(await committed('payments_inbox', event)).toBe(1);
    // The non-transactional handler of the same event ran in the worker too, outside any transaction.
    expect(handler.sawTransaction).toEqual([false]);
  });

  it('[W4] rolls back a throw on the first attempt; the job retry runs the handler again from a clean state, ending with one row', async () => {
    const { url, handler, queue } = await start();
    const event = createPaymentEvent('payment_intent.succeeded');
    const seenByRetry: Array<{ ledger: number; inbox: number }> = [];
    handler.behaviour = async () => {
      if (handler.runs.length === 1) throw new Error('warehouse down');
      // Second run: another session sees nothing of the first attempt (its INSERT and record rolled back).
      seenByRetry.push({
        ledger: await committed('ledger', event),
        inbox: await committed('payments_inbox', event),
      });
    };
    expect((await post(url, sign(event))).status).toBe(200);
    await completed(queue, event.id);
    expect(handler.runs).toEqual([event.id, event.id]);
    expect(seenByRetry).toEqual([{ ledger: 0, inbox: 0 }]);
    expect(await committed('ledger', event)).toBe(1);
    expect(await committed('payments_inbox', event)).toBe(1);
  });

  it('[W4] turns duplicate deliveries (concurrent, and after completion) into one run and one row', async () => {
    const { url, handler, queue } = await start();
    const event = createPaymentEvent('payment_intent.succeeded');
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(url, sign(event))));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await completed(queue, event.id);
    const late = await post(url, sign(event));
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ outcome: 'duplicate' });
    expect(handler.runs).toEqual([event.id]);
    expect(await committed('ledger', event)).toBe(1);
    expect(await committed('payments_inbox', event)).toBe(1);
  });
});
