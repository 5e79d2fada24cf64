import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PaymentsSimulator, createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';
import { createRedis, deleteKeys, quitAll } from '../../integration/redis-test.util.js';
import { createTestDatabase, type TestDatabase } from '../../integration/postgres/postgres-test.util.js';
import { buildInboxApps, stopMerchant, type InboxAppsBuild } from '../../integration/postgres/support/inbox-apps.js';
import { MerchantFleet } from '../support/merchant-fleet.js';
import { CHAOS_SEED, REDIS_URL } from '../support/chaos-sizes.js';
import { PARTS, progress, report } from '../support/chaos.context.js';
import { SeededRandom } from '../support/seeded-random.js';

/** The two handlers of the merchant app (test/integration/postgres/apps/inbox-merchant.main.ts), each one plain INSERT. */
const HANDLERS = ['credit', 'ship'] as const;
/** Self-kill odds per point of a delivery: inside the handler (row written), between handler and COMMIT, between COMMIT and the answer. */
const KILL = 'in-handler:0.005,before-commit:0.005,after-commit:0.005';
const PROCESSES = 3;
/** Fast retries so a killed process's deliveries come back within seconds: 120 attempts over ~60 s. */
const RETRY_SCHEDULE = [100, 200, 300, ...Array.from({ length: 117 }, () => 500)];
const BATCH = 20;

/** Events of the part at a given CHAOS_PAYMENTS: 15% of it (300 at the CI size 2000), at least 20. */
export function inboxChaosEvents(payments: number): number {
  return Math.max(20, Math.round(payments * 0.15));
}

interface Run {
  events: number;
  attempts: number;
  copies: number;
  answers409: number;
  noAnswer: number;
  kills: number;
  timerKills: number;
  forgedSent: number;
  lost: number;
  extraRows: number;
  rowsWithoutValidDelivery: number;
  exhausted: number;
  durationS: number;
}

/** A loopback round-robin proxy in front of the merchant processes: 502 when the chosen one dies mid-request, 503 when none is up. */
export function startProxy(targets: () => number[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const server = http.createServer((req, res) => {
    const ports = targets();
    if (ports.length === 0) {
      req.resume();
      res.writeHead(503).end();
      return;
    }
    const port = ports[next++ % ports.length]!;
    const upstream = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 1_000;
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/payments/webhooks`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/*
 * One run: PaymentsSimulator emits `events` payment_intent.succeeded events (each 1-3 copies,
 * concurrent or sequential, batches held and released shuffled) to a proxy in front of 3 merchant
 * processes sharing one PostgreSQL database. The processes SIGKILL themselves at seeded moments of a
 * delivery, the test SIGKILLs a random one every 0.6-1.8 s while events are emitted, and every killed
 * process is restarted; the simulator's retries bring the lost deliveries back. Forged deliveries
 * (another secret) go to the proxy too. Then the ledger is counted per (event, handler).
 */
async function runMerchants(
  build: InboxAppsBuild,
  db: TestDatabase,
  mode: 'inbox' | 'redis',
  events: number,
  random: SeededRandom,
): Promise<Run> {
  const started = Date.now();
  // Created once here: concurrent CREATE TABLE IF NOT EXISTS from 3 booting processes races on the
  // catalog (23505 on pg_type) and kills the losers at boot (what sank the first draft of this part).
  await db.pool.query(
    'CREATE TABLE IF NOT EXISTS ledger (id bigserial PRIMARY KEY, event_id text NOT NULL, handler text NOT NULL, amount integer NOT NULL)',
  );

  const current: { fleet?: MerchantFleet } = {};
  const proxy = await startProxy(() => current.fleet?.live().map((p) => p.port) ?? []);
  const sim = new PaymentsSimulator({
    apiKeys: ['sk_test_chaos_inbox'],
    retrySchedule: RETRY_SCHEDULE,
    deliveryTimeoutMs: 5_000,
    random: () => random.next(),
  });
  await sim.start().catch(async (error: unknown) => {
    await proxy.close();
    throw error;
  });
  const endpoint = sim.registerWebhookEndpoint({ url: proxy.url });
  const env = {
    PG_URL: db.url,
    ORM: 'pg',
    MODE: mode,
    SECRET: endpoint.secret,
    KILL,
    CLAIM_TTL_SECONDS: '2',
    REDIS_URL,
    REDIS_PREFIX: `chaos:inbox:${randomUUID().slice(0, 8)}:`,
  };
  const fleet = new MerchantFleet(build.main, env, random, mode, PROCESSES);
  current.fleet = fleet;
  await fleet.start();
  // Random SIGKILLs from outside, while events are being emitted.
  fleet.startKilling();

  let copies = 0;
  let forgedSent = 0;
  const forged: Promise<void>[] = [];
  try {
    for (let first = 0; first < events; first += BATCH) {
      const held = random.chance(0.5);
      if (held) sim.controls.hold();
      for (let i = first; i < Math.min(events, first + BATCH); i++) {
        const n = random.chance(0.5) ? random.int(2, 3) : 1;
        copies += n - 1;
        sim.controls
          .duplicateDeliveries(n, random.chance(0.5) ? 'concurrent' : 'sequential')
          .outOfOrder(random.pick(['reverse', 'shuffle', false] as const));
        sim.emit('payment_intent.succeeded');
        if (random.chance(0.05)) {
          forgedSent += 1;
          const foreign = `whsec_${Buffer.from(randomUUID().replace(/-/g, '')).toString('base64')}`;
          const signed = signWebhook(createPaymentEvent('payment_intent.succeeded'), {
            scheme: 'standard-webhooks',
            secret: foreign,
          });
          forged.push(
            fetch(proxy.url, { method: 'POST', headers: signed.headers, body: signed.rawBody })
              .then((r) => r.text())
              .then(
                () => undefined,
                () => undefined,
              ),
          );
        }
      }
      if (held) sim.controls.release('shuffle');
      // Let the batch get going before the next one (bounded: the simulator owns the retries).
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    sim.controls.duplicateDeliveries(1).outOfOrder(false);
    await sim.waitForIdle({ timeoutMs: 120_000 });
  } finally {
    await fleet.stop();
    await Promise.all(forged);
    await Promise.all(fleet.procs.map((p) => stopMerchant(p)));
    await proxy.close();
    await sim.stop();
    if (mode === 'redis') {
      const redis = createRedis();
      await deleteKeys(redis, env.REDIS_PREFIX);
      await quitAll(redis);
    }
  }

  const requests = sim.webhookRequests();
  const attempts = requests.flatMap((r) => r.attempts);
  const emitted = new Set(sim.events().map((e) => e.id));
  const rows = (
    await db.pool.query<{ event_id: string; handler: string; n: number }>(
      'SELECT event_id, handler, count(*)::int AS n FROM ledger GROUP BY event_id, handler',
    )
  ).rows;
  const counts = new Map(rows.map((r) => [`${r.event_id}:${r.handler}`, r.n]));
  let lost = 0;
  let extraRows = 0;
  for (const id of emitted) {
    for (const handler of HANDLERS) {
      const n = counts.get(`${id}:${handler}`) ?? 0;
      if (n === 0) lost += 1;
      if (n > 1) extraRows += n - 1;
    }
  }
  const rowsWithoutValidDelivery = rows
    .filter((r) => !emitted.has(r.event_id) || !(HANDLERS as readonly string[]).includes(r.handler))
    .reduce((sum, r) => sum + r.n, 0);
  return {
    events: emitted.size,
    attempts: attempts.length,
    copies,
    answers409: attempts.filter((a) => a.status_code === 409).length,
    noAnswer: attempts.filter((a) => a.status_code === null || a.status_code === 502 || a.status_code === 503).length,
    kills: fleet.kills,
    timerKills: fleet.timerKills,
    forgedSent,
    lost,
    extraRows,
    rowsWithoutValidDelivery,
    exhausted: requests.filter((r) => r.status === 'failed').length,
    durationS: (Date.now() - started) / 1000,
  };
}

/**
 * Issue 10's proof: exactly-once effects with the PostgreSQL transactional inbox under SIGKILL, and
 * the same run with the non-transactional RedisIdempotencyStore beside it (its duplicates measured).
 */
export function describePostgresInboxChaos(events: number): void {
  describe(`PostgreSQL inbox vs Redis store: ${PROCESSES} processes under SIGKILL, ${events} events x ${HANDLERS.length} plain-INSERT handlers`, () => {
    let build: InboxAppsBuild;
    const dbs: TestDatabase[] = [];
    beforeAll(() => {
      build = buildInboxApps();
    });
    afterAll(async () => {
      build?.remove();
      await Promise.all(dbs.map((db) => db.drop()));
    });

    const record = (part: string, run: Run, doubles: 'doubleRuns' | 'duplicateLedgerRows'): void => {
      report.record(part, {
        casesRun: events * HANDLERS.length,
        events: run.events,
        deliveries: run.attempts + run.forgedSent,
        duplicateDeliveries: run.copies,
        answers409: run.answers409,
        processKills: run.kills,
        deliveriesCutByKills: run.noAnswer,
        [doubles]: run.extraRows,
        lostEvents: run.lost + run.exhausted,
        handlerRunsWithoutValidSignature: run.rowsWithoutValidDelivery,
        durationS: run.durationS,
      });
      progress(`${part}: ${JSON.stringify(run)}`);
    };

    it('[W4] transactional inbox: exactly 1 ledger row per (event, handler), 0 lost, 0 rows without a valid delivery', async () => {
      const db = await createTestDatabase('chaos_inbox');
      dbs.push(db);
      const run = await runMerchants(build, db, 'inbox', events, new SeededRandom(CHAOS_SEED).fork('postgres inbox'));
      record(PARTS.inbox, run, 'doubleRuns');
      expect(run.kills).toBeGreaterThan(0);
      expect({
        events: run.events,
        extra: run.extraRows,
        lost: run.lost,
        exhausted: run.exhausted,
        unverified: run.rowsWithoutValidDelivery,
      }).toEqual({
        events,
        extra: 0,
        lost: 0,
        exhausted: 0,
        unverified: 0,
      });
    }, 150_000);

    it('non-transactional Redis store, same run: duplicate ledger rows measured (not a failure), 0 lost, 0 rows without a valid delivery', async () => {
      const db = await createTestDatabase('chaos_redis');
      dbs.push(db);
      const run = await runMerchants(build, db, 'redis', events, new SeededRandom(CHAOS_SEED).fork('postgres inbox'));
      record(PARTS.inboxRedis, run, 'duplicateLedgerRows');
      expect({ lost: run.lost, exhausted: run.exhausted, unverified: run.rowsWithoutValidDelivery }).toEqual({
        lost: 0,
        exhausted: 0,
        unverified: 0,
      });
    }, 150_000);
  });
}
