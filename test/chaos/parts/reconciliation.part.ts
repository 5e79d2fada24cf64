import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { createRedis, deleteKeys, quitAll } from '../../integration/redis-test.util.js';
import { createTestDatabase, type TestDatabase } from '../../integration/postgres/postgres-test.util.js';
import { buildInboxApps, stopMerchant, type InboxAppsBuild } from '../../integration/postgres/support/inbox-apps.js';
import { MerchantFleet } from '../support/merchant-fleet.js';
import { CHAOS_SEED, REDIS_URL } from '../support/chaos-sizes.js';
import { PARTS, progress, report } from '../support/chaos.context.js';
import { SeededRandom } from '../support/seeded-random.js';
import { startProxy } from './postgres-inbox.part.js';

/*
 * When webhooks don't come, under SIGKILL (issue 24): 3 merchant processes (test/integration/postgres/
 * apps/inbox-merchant.main.ts with RECONCILE=1) behind a round-robin proxy create the orders' payment
 * intents through PaymentsService (so they are watched) and reconcile every second. The simulator drops
 * a third of the webhooks for good and holds others until the reconcilers have acted; every fifth order
 * is cancelled. The processes SIGKILL themselves at seeded points of a delivery (inside the handler,
 * before and after COMMIT) and are killed from outside now and then; each is restarted. Then the ledger
 * (plain INSERTs, keyed by intent) is counted per (intent, handler).
 */
const HANDLERS = ['credit', 'ship'] as const;
const KILL = 'in-handler:0.01,before-commit:0.01,after-commit:0.01';
const PROCESSES = 3;
const RETRY_SCHEDULE = Array.from({ length: 40 }, () => 300);

/** Orders of the part at a given CHAOS_PAYMENTS: 3 % of it (60 at the CI size 2000), at least 30. */
export function reconcileChaosOrders(payments: number): number {
  return Math.max(30, Math.round(payments * 0.03));
}

interface ReconcileRun {
  paid: number;
  cancelled: number;
  dropped: number;
  unfulfilled: number;
  extraRows: number;
  cancelledEffects: number;
  reconciledRows: number;
  kills: number;
  timerKills: number;
  stillWatched: number;
  durationS: number;
}

/** Kills and drops happened, and still: every paid order fulfilled once, no cancelled one, none left watched. */
function expectExactlyOnce(run: ReconcileRun): void {
  expect(run.kills).toBeGreaterThan(0);
  expect(run.dropped).toBeGreaterThan(0);
  expect({
    unfulfilled: run.unfulfilled,
    extra: run.extraRows,
    cancelled: run.cancelledEffects,
    watched: run.stillWatched,
  }).toEqual({ unfulfilled: 0, extra: 0, cancelled: 0, watched: 0 });
}

async function runReconcile(
  build: InboxAppsBuild,
  db: TestDatabase,
  mode: 'inbox' | 'redis' | 'inbox-redis',
  orders: number,
  random: SeededRandom,
): Promise<ReconcileRun> {
  const started = Date.now();
  await db.pool.query(
    'CREATE TABLE IF NOT EXISTS ledger (id bigserial PRIMARY KEY, event_id text NOT NULL, handler text NOT NULL, amount integer NOT NULL)',
  );
  // The records (and their watch list): created once, before three processes start.
  const { postgresIdempotencyStoreSchema } = await import('../../../lib/webhooks/index.js');
  await db.pool.query(postgresIdempotencyStoreSchema());

  const current: { fleet?: MerchantFleet } = {};
  const proxy = await startProxy(() => current.fleet?.live().map((p) => p.port) ?? []);
  const sim = new PaymentsSimulator({
    apiKeys: ['sk_test_chaos_reconcile'],
    retrySchedule: RETRY_SCHEDULE,
    deliveryTimeoutMs: 5_000,
    random: () => random.next(),
  });
  const baseUrl = await sim.start();
  const endpoint = sim.registerWebhookEndpoint({ url: proxy.url, apiKey: 'sk_test_chaos_reconcile' });
  const redisPrefix = `chaos:reconcile:${randomUUID().slice(0, 8)}:`;
  const env = {
    PG_URL: db.url,
    ORM: 'pg',
    // inbox-redis: claims and the watch list in Redis, the effects in the PostgreSQL inbox's transaction.
    MODE: mode === 'redis' ? 'redis' : 'inbox',
    STORE: mode === 'inbox' ? 'postgres' : mode === 'inbox-redis' ? 'redis' : '',
    SECRET: endpoint.secret,
    KILL,
    CLAIM_TTL_SECONDS: '2',
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    RECONCILE: '1',
    BASE_URL: baseUrl,
    API_KEY: 'sk_test_chaos_reconcile',
  };
  const fleet = new MerchantFleet(build.main, env, random, `reconcile ${mode}`, PROCESSES);
  current.fleet = fleet;
  await fleet.start();
  fleet.startKilling();

  const shopUrl = proxy.url.replace('/payments/webhooks', '/orders');
  /** POST /orders through the proxy; retried while the chosen process dies (an order never answered is not counted). */
  const createOrder = async (): Promise<{ id: string; embed_token: string } | undefined> => {
    for (let tries = 0; tries < 20; tries++) {
      const answer = await fetch(shopUrl, { method: 'POST' }).catch(() => undefined);
      if (answer?.status === 201) return (await answer.json()) as { id: string; embed_token: string };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return undefined;
  };

  const paid: string[] = [];
  const cancelled: string[] = [];
  /**
   * Orders (paid or cancelled) still on the watch list. An intent created for an order whose answer a
   * kill cut off (the test then created another) is never confirmed: it stays pending and watched,
   * rightly, so it is not counted.
   */
  const watchedOrders = async (): Promise<number> => {
    const ids = mode === 'inbox' ? await postgresWatched(db) : await redisWatched(redisPrefix);
    const orders = new Set([...paid, ...cancelled]);
    return ids.filter((id) => orders.has(id)).length;
  };
  try {
    for (let i = 0; i < orders; i++) {
      sim.controls.reset();
      const roll = random.next();
      if (roll < 1 / 3) sim.controls.dropDeliveries(1);
      else if (roll < 2 / 3) sim.controls.delayDeliveries(random.int(1_500, 4_000)); // late: after a sweep
      const order = await createOrder();
      if (!order) continue;
      const outcome = i % 5 === 4 ? 'cancelled' : 'succeeded';
      const confirmed = await fetch(`${baseUrl}/embed/confirm`, {
        method: 'POST',
        headers: { authorization: `Embed ${order.embed_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ outcome }),
      });
      if (confirmed.status !== 200) throw new Error(`confirm answered ${confirmed.status}`);
      (outcome === 'succeeded' ? paid : cancelled).push(order.id);
    }
    sim.controls.reset();
    await sim.waitForIdle({ timeoutMs: 120_000 });
    fleet.stopKilling();
    // Let the reconcilers (every second, on restarted processes too) settle what is left.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && (await watchedOrders()) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await fleet.stop();
    await Promise.all(fleet.procs.map((p) => stopMerchant(p)));
    await proxy.close();
    await sim.stop();
  }
  const stillWatched = await watchedOrders();
  if (mode !== 'inbox') {
    const redis = createRedis();
    await deleteKeys(redis, redisPrefix);
    await quitAll(redis);
  }
  const rows = (
    await db.pool.query<{ event_id: string; handler: string; n: number }>(
      'SELECT event_id, handler, count(*)::int AS n FROM ledger GROUP BY event_id, handler',
    )
  ).rows;
  const counts = new Map(rows.map((r) => [`${r.event_id}:${r.handler}`, r.n]));
  let unfulfilled = 0;
  let extraRows = 0;
  for (const id of paid) {
    for (const handler of HANDLERS) {
      const n = counts.get(`${id}:${handler}`) ?? 0;
      if (n === 0) unfulfilled += 1;
      if (n > 1) extraRows += n - 1;
    }
  }
  const cancelledSet = new Set(cancelled);
  // A paid order whose succeeded event no delivery ever got a 200 for was settled by a reconciler.
  const answered = new Set(
    sim
      .webhookRequests()
      .filter((r) => r.last_status_code === 200)
      .map((r) => r.event_id),
  );
  const settledByWebhook = new Set(
    sim
      .events()
      .filter((e) => e.event === 'payment_intent.succeeded' && answered.has(e.id))
      .map((e) => String((e.data as { payment_intent?: { id?: unknown } }).payment_intent?.id)),
  );
  return {
    paid: paid.length,
    cancelled: cancelled.length,
    dropped: sim.controls.dropped,
    unfulfilled,
    extraRows,
    cancelledEffects: rows.filter((r) => cancelledSet.has(r.event_id)).reduce((sum, r) => sum + r.n, 0),
    reconciledRows: paid.filter((id) => !settledByWebhook.has(id)).length * HANDLERS.length,
    kills: fleet.kills,
    timerKills: fleet.timerKills,
    stillWatched,
    durationS: (Date.now() - started) / 1000,
  };
}

/** The intents whose record is watched (the store's own reading: an index entry its record disowns is not). */
async function redisWatched(prefix: string): Promise<string[]> {
  const redis = createRedis();
  try {
    const { RedisIntentWatchStore } = await import('../../../lib/webhooks/index.js');
    return (await new RedisIntentWatchStore(redis, { keyPrefix: prefix }).list()).map((intent) => intent.id);
  } finally {
    await quitAll(redis);
  }
}

/** The intents of the unnamed instance whose record (`i:<id>` in the store's table) is watched. */
async function postgresWatched(db: TestDatabase): Promise<string[]> {
  const { DEFAULT_POSTGRES_IDEMPOTENCY_TABLE } =
    await import('../../../lib/webhooks/stores/postgres-idempotency.sql.js');
  return (
    await db.pool.query<{ id: string }>(
      `SELECT substr(key, 3) AS id FROM ${DEFAULT_POSTGRES_IDEMPOTENCY_TABLE} WHERE watch_scope = '' AND watch_next_ms IS NOT NULL`,
    )
  ).rows.map((row) => row.id);
}

/** Issue 24's proof under SIGKILL: every paid order fulfilled exactly once (inbox), none of the cancelled ones. */
export function describeReconciliationChaos(orders: number): void {
  describe(`reconciliation: ${PROCESSES} processes under SIGKILL, ${orders} orders, a third of the webhooks dropped, a third late`, () => {
    let build: InboxAppsBuild;
    const dbs: TestDatabase[] = [];
    beforeAll(() => {
      build = buildInboxApps();
    });
    afterAll(async () => {
      build?.remove();
      await Promise.all(dbs.map((db) => db.drop()));
    });

    const record = (part: string, run: ReconcileRun, doubles: 'doubleRuns' | 'duplicateLedgerRows'): void => {
      report.record(part, {
        casesRun: (run.paid + run.cancelled) * HANDLERS.length,
        ordersPaid: run.paid,
        webhooksDropped: run.dropped,
        reconciledRows: run.reconciledRows,
        processKills: run.kills,
        unfulfilledPaidOrders: run.unfulfilled,
        effectsForCancelledOrders: run.cancelledEffects,
        [doubles]: run.extraRows,
        durationS: run.durationS,
      });
      progress(`${part}: ${JSON.stringify(run)}`);
    };

    it('[W4] PostgreSQL inbox: every paid order fulfilled exactly once (plain INSERTs), no cancelled one, no order left on the watch list', async () => {
      const db = await createTestDatabase('chaos_reconcile');
      dbs.push(db);
      const run = await runReconcile(build, db, 'inbox', orders, new SeededRandom(CHAOS_SEED).fork('reconcile inbox'));
      record(PARTS.reconcileInbox, run, 'doubleRuns');
      expectExactlyOnce(run);
    }, 240_000);

    it('[W4] Redis store with the PostgreSQL inbox: every paid order fulfilled exactly once (plain INSERTs), no cancelled one, none left watched', async () => {
      const db = await createTestDatabase('chaos_reconcile_redis_inbox');
      dbs.push(db);
      const run = await runReconcile(
        build,
        db,
        'inbox-redis',
        orders,
        new SeededRandom(CHAOS_SEED).fork('reconcile redis inbox'),
      );
      record(PARTS.reconcileRedisInbox, run, 'doubleRuns');
      expectExactlyOnce(run);
    }, 240_000);

    it('Redis store (handlers not transactional): every paid order fulfilled, no cancelled one; duplicate rows measured (at-least-once under SIGKILL)', async () => {
      const db = await createTestDatabase('chaos_reconcile_redis');
      dbs.push(db);
      const run = await runReconcile(build, db, 'redis', orders, new SeededRandom(CHAOS_SEED).fork('reconcile redis'));
      record(PARTS.reconcileRedis, run, 'duplicateLedgerRows');
      expect({ unfulfilled: run.unfulfilled, cancelled: run.cancelledEffects, watched: run.stillWatched }).toEqual({
        unfulfilled: 0,
        cancelled: 0,
        watched: 0,
      });
    }, 240_000);
  });
}
