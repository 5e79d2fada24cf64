import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  MemoryIdempotencyStore,
  PaymentEventsQueue,
  RedisIdempotencyStore,
  type PaymentEvent,
  type PaymentEventType,
} from '../../../lib/index.js';
import { type PaymentsProcessingOptions } from '../../../lib/webhooks/index.js';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { eventRecordOf, runSlot } from '../../../lib/webhooks/records/record-keys.js';
import { createRedis, deleteKeys, quitAll, uniquePrefix, uniqueQueueName } from '../../integration/redis-test.util.js';
import { CHAOS_SEED, REDIS_URL } from '../support/chaos-sizes.js';
import { auditLogger, CrashWatch, leakAudit, PARTS, progress, report } from '../support/chaos.context.js';
import { OutageIdempotencyStore } from '../support/outage-idempotency.store.js';
import { SeededRandom } from '../support/seeded-random.js';
import { CHAOS_API_KEY, freePort, startMerchantApp, type MerchantApp } from '../merchant/merchant-app.fixture.js';
import { handlersFor, orderStatusFor } from '../merchant/merchant-payment.handlers.js';

/** Share of handler calls that throw. */
const FAILURE_RATE = 0.1;
/** Share of payments whose every event is delivered more than once. */
const DUPLICATE_RATE = 0.3;
/** Share of batches of payments held and released in a shuffled order. */
const HELD_BATCH_RATE = 0.4;
const BATCH_SIZE = 50;
/** Lease of a claim: how long a lost completion keeps redeliveries out before the handler may run again. */
const CLAIM_TTL_SECONDS = 3;
/**
 * The simulator's retry schedule: fast first, then up to 5 s apart; 26 attempts over about a minute,
 * long enough for any injected failure streak, outage or lease to pass.
 */
const RETRY_SCHEDULE = [
  10, 25, 50, 100, 200, 300, 500, 750, 1000, 1000, 1500, 1500, 2000, 2000, 2000, 3000, 3000, 3000, 3000, 3000, 5000,
  5000, 5000, 5000, 5000,
];

/** States an intent goes through, confirm first; each only moves up pending -> failed -> paid (see orderStatusFor). */
const LIFECYCLES: ReadonlyArray<readonly [readonly string[], number]> = [
  [['succeeded'], 30],
  [['errored_authorization', 'succeeded'], 10],
  [['requires_review', 'succeeded'], 8],
  [['requires_review', 'cancelled'], 6],
  [['cancelled'], 8],
  [['errored_sale'], 6],
  [['requires_capture', 'succeeded'], 10],
  [['requires_payment_method'], 5],
  [['errored_capture', 'cancelled'], 5],
  [['requires_confirmation', 'errored_authorization', 'succeeded'], 7],
];

interface DeliveryPlan {
  copies: number;
  mode: 'concurrent' | 'sequential';
  order: 'reverse' | 'shuffle' | false;
}

interface PendingFollowUp {
  intentId: string;
  states: string[];
  plan: DeliveryPlan;
}

export interface ChaosConfiguration {
  part: string;
  title: string;
  adapter: 'express' | 'fastify';
  mode: 'inline' | 'queued';
}

export const CHAOS_CONFIGURATIONS: readonly ChaosConfiguration[] = [
  {
    part: PARTS.chaosInline,
    title: 'inline processing + MemoryIdempotencyStore (Express)',
    adapter: 'express',
    mode: 'inline',
  },
  {
    part: PARTS.chaosQueued,
    title: 'queued processing (BullMQ) + RedisIdempotencyStore (Fastify, real Redis)',
    adapter: 'fastify',
    mode: 'queued',
  },
];

/**
 * Item 3: `payments` payments end to end through PaymentsSimulator and a merchant app, with 30%
 * duplicate deliveries, reordering (held batches released shuffled, reversed or shuffled batches,
 * follow-up events emitted late), 10% of handler calls failing and short store outages; then every
 * order, every handler's work and every event is reconciled.
 */
export function describeSimulatorChaos(config: ChaosConfiguration, payments: number): void {
  describe(`chaos through PaymentsSimulator: ${config.title}, ${payments} payments`, () => {
    const random = new SeededRandom(CHAOS_SEED).fork(config.part);
    const crashes = new CrashWatch();
    let sim: PaymentsSimulator;
    let merchant: MerchantApp;
    let store: OutageIdempotencyStore;
    let redis: Redis | undefined;
    let keyPrefix = '';
    let queueName = '';
    let started = 0;
    let auditMark = leakAudit.mark();

    beforeAll(async () => {
      started = Date.now();
      auditMark = leakAudit.mark();
      crashes.install();
      leakAudit.addApiKey('chaos API key', CHAOS_API_KEY);
      const simulatorRandom = random.fork('simulator');
      sim = new PaymentsSimulator({
        apiKeys: [CHAOS_API_KEY],
        retrySchedule: RETRY_SCHEDULE,
        deliveryTimeoutMs: 15_000,
        random: () => simulatorRandom.next(),
      });
      const simulatorUrl = await sim.start();
      const port = await freePort();
      const endpoint = sim.registerWebhookEndpoint({ url: `http://127.0.0.1:${port}/payments/webhooks` });
      leakAudit.addWebhookSecret(`${config.part} endpoint secret`, endpoint.secret);

      let processing: PaymentsProcessingOptions = 'inline';
      if (config.mode === 'queued') {
        redis = createRedis();
        keyPrefix = uniquePrefix('chaos');
        queueName = uniqueQueueName('chaos');
        store = new OutageIdempotencyStore(new RedisIdempotencyStore(redis, { keyPrefix }), random.fork('outages'));
        processing = {
          queue: {
            connection: { url: REDIS_URL },
            name: queueName,
            attempts: 150,
            backoff: { type: 'fixed', delay: 100 },
            concurrency: 8,
          },
        };
      } else {
        store = new OutageIdempotencyStore(
          new MemoryIdempotencyStore({ maxEntries: 1_000_000 }),
          random.fork('outages'),
        );
      }
      merchant = await startMerchantApp({
        adapter: config.adapter,
        port,
        simulatorUrl,
        endpoint,
        store,
        processing,
        claimTtlSeconds: CLAIM_TTL_SECONDS,
        logger: auditLogger,
        random: random.fork('handler failures'),
        failureRate: FAILURE_RATE,
      });
    });

    afterAll(async () => {
      await merchant?.close();
      await sim?.stop();
      if (redis) {
        const inspector = new Queue(queueName, { connection: { url: REDIS_URL } });
        await inspector.obliterate({ force: true }).catch(() => undefined);
        await inspector.close();
        await deleteKeys(redis, keyPrefix);
        await quitAll(redis);
      }
      progress(`${config.part}: ${payments} payments in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      crashes.uninstall();
      report.record(config.part, {
        crashes: crashes.uncaught,
        durationS: (Date.now() - started) / 1000,
        ...leakAudit.since(auditMark),
      });
    });

    /** Sets the controls for one payment's deliveries (they apply to what is emitted next). */
    function apply(plan: DeliveryPlan): void {
      sim.controls.duplicateDeliveries(plan.copies, plan.mode).outOfOrder(plan.order);
    }

    async function confirm(embedToken: string, outcome: string): Promise<number> {
      const response = await fetch(`${sim.baseUrl}/embed/confirm`, {
        method: 'POST',
        headers: { authorization: `Embed ${embedToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ outcome }),
      });
      await response.text();
      return response.status;
    }

    it(`[W4][W2] ${payments} payments: every order ends in the state of its intent, every handler's work is done once, no event is lost`, async () => {
      let refusedConfirms = 0;
      let deferred: PendingFollowUp[] = [];
      const emitFollowUps = (followUp: PendingFollowUp): void => {
        // Each later state is emitted now, or left for the next batch (delivered among other payments' retries).
        while (followUp.states.length > 0) {
          if (random.chance(0.5)) {
            deferred.push(followUp);
            return;
          }
          apply(followUp.plan);
          sim.emit(`payment_intent.${followUp.states.shift()!}` as PaymentEventType, followUp.intentId);
        }
      };

      for (let first = 0; first < payments; first += BATCH_SIZE) {
        const held = random.chance(HELD_BATCH_RATE);
        if (held) sim.controls.hold();
        const late = deferred;
        deferred = [];
        for (const followUp of late) emitFollowUps(followUp);
        for (let i = first; i < Math.min(payments, first + BATCH_SIZE); i++) {
          const [outcome, ...later] = random.weighted(LIFECYCLES);
          const plan: DeliveryPlan = {
            copies: random.chance(DUPLICATE_RATE) ? random.int(2, 3) : 1,
            mode: random.chance(0.5) ? 'concurrent' : 'sequential',
            order: random.pick(['reverse', 'shuffle', false] as const),
          };
          const { order, embedToken } = await merchant.createOrder(random.int(100, 100_000));
          apply(plan);
          if ((await confirm(embedToken, outcome!)) !== 200) refusedConfirms += 1;
          emitFollowUps({ intentId: order.paymentIntentId, states: [...later], plan });
        }
        if (held) sim.controls.release('shuffle');
      }
      while (deferred.length > 0) {
        const late = deferred;
        deferred = [];
        for (const followUp of late) emitFollowUps(followUp);
      }
      sim.controls.duplicateDeliveries(1).outOfOrder(false);

      const idleTimeoutMs = Math.min(25 * 60_000, Math.max(300_000, payments * 120));
      let idleError: unknown;
      await sim.waitForIdle({ timeoutMs: idleTimeoutMs }).catch((error: unknown) => {
        idleError = error;
        leakAudit.scanError(error, 'waitForIdle');
      });
      const events = sim.events();
      const emitted = new Map(events.map((event) => [event.id, event.event]));
      const allDone = () =>
        events.every((event) =>
          handlersFor(event.event).every((handler) => (merchant.effects.get(event.id, handler)?.completed ?? 0) > 0),
        );

      let queueFailed = 0;
      let drainError: unknown;
      if (config.mode === 'queued') {
        const inspector = new Queue(queueName, { connection: { url: REDIS_URL } });
        try {
          const deadline = Date.now() + Math.max(120_000, payments * 60);
          for (;;) {
            const counts = await inspector.getJobCounts(
              'waiting',
              'active',
              'delayed',
              'prioritized',
              'waiting-children',
            );
            const busy = Object.values(counts).reduce((a, b) => a + b, 0);
            if (busy === 0 && allDone()) break;
            if (busy === 0 && (await inspector.getFailedCount()) > 0) break;
            if (Date.now() > deadline) {
              drainError = new Error(`queue not drained: ${JSON.stringify(counts)}`);
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          const queue = merchant.app.get(PaymentEventsQueue);
          queueFailed = await queue.failedCount();
          for (const failed of await queue.failed(0, 99)) leakAudit.scan(failed.failedReason, 'failed job reason');
        } finally {
          await inspector.close();
        }
      }

      // Reconcile: handlers per event, orders per intent, deliveries per attempt.
      let lostEvents = 0;
      let doubleRuns = 0;
      let rerunsAfterLostCompletion = 0;
      let runsOutsideEmittedEvents = 0;
      let wrongHandler = 0;
      for (const event of events) {
        for (const handler of handlersFor(event.event)) {
          const completed = merchant.effects.get(event.id, handler)?.completed ?? 0;
          if (completed === 0) lostEvents += 1;
          if (completed > 1) {
            // Each refused completion allows one more run (the lease expires, the handler runs again); nothing else does.
            const record = eventRecordOf(event as PaymentEvent, '');
            const allowed = store.lostCompletions.get(`${record.key} ${runSlot(record, handler)}`) ?? 0;
            rerunsAfterLostCompletion += Math.min(completed - 1, allowed);
            doubleRuns += Math.max(0, completed - 1 - allowed);
          }
        }
      }
      for (const [eventId, handler, effect] of merchant.effects.entries()) {
        const type = emitted.get(eventId);
        if (type === undefined) runsOutsideEmittedEvents += effect.invoked;
        else if (!handlersFor(type).includes(handler)) wrongHandler += effect.invoked;
      }

      let wrongOrders = 0;
      let wrongShipments = 0;
      for (const order of merchant.orders.all()) {
        const intent = sim.intent(order.paymentIntentId);
        const expected = intent === undefined ? 'missing' : orderStatusFor(intent.state);
        if (order.status !== expected) wrongOrders += 1;
        if (order.shipments !== (expected === 'paid' ? 1 : 0)) wrongShipments += 1;
      }

      const requests = sim.webhookRequests();
      const exhausted = requests.filter((r) => r.status === 'failed').length;
      const attempts = requests.flatMap((r) => r.attempts);
      const count = (status: number | null) => attempts.filter((a) => a.status_code === status).length;
      const answers500 = count(500);
      const answers503 = count(503);
      const other5xx = attempts.filter(
        (a) => a.status_code !== null && a.status_code >= 500 && a.status_code !== 500 && a.status_code !== 503,
      ).length;
      for (const attempt of attempts)
        if (attempt.error !== null) leakAudit.scan(attempt.error, 'delivery attempt error');
      const unexpected = merchant.effects.unexpectedErrors;
      for (const error of unexpected) leakAudit.scanError(error, 'unexpected handler error');
      // Every 500 needs a handler failure behind it, every 503 a refused store call; in queued mode the answer
      // comes before any handler or store call, so neither may appear at all.
      const explained500 = config.mode === 'inline' ? merchant.effects.injectedFailures + unexpected.length : 0;
      const explained503 = config.mode === 'inline' ? store.refusedCalls : 0;
      const fiveXxOutsideTable =
        other5xx + Math.max(0, answers500 - explained500) + Math.max(0, answers503 - explained503);

      const figures = {
        casesRun: payments,
        handlerRunsWithoutValidSignature: runsOutsideEmittedEvents,
        lostEvents: lostEvents + queueFailed,
        doubleRuns,
        fiveXxOutsideTable,
        wrongAnswers:
          wrongOrders +
          wrongShipments +
          wrongHandler +
          exhausted +
          refusedConfirms +
          unexpected.length +
          (idleError ? 1 : 0) +
          (drainError ? 1 : 0),
        events: events.length,
        deliveries: attempts.length,
        duplicateDeliveries: requests.length - emitted.size,
        answers409: count(409),
        answers500,
        answers503,
        injectedFailures: merchant.effects.injectedFailures,
        storeOutages: store.outages,
        storeCallsRefused: store.refusedCalls,
        rerunsAfterLostCompletion,
        effectsAbsorbed: merchant.orders.repeatedShipments,
      };
      report.record(config.part, figures);

      expect({
        idleError: idleError === undefined ? undefined : String(idleError),
        drainError: drainError === undefined ? undefined : String(drainError),
      }).toEqual({
        idleError: undefined,
        drainError: undefined,
      });
      expect({
        lostEvents,
        queueFailed,
        doubleRuns,
        runsOutsideEmittedEvents,
        wrongHandler,
        wrongOrders,
        wrongShipments,
        exhausted,
        refusedConfirms,
        unexpected: unexpected.length,
        fiveXxOutsideTable,
      }).toEqual({
        lostEvents: 0,
        queueFailed: 0,
        doubleRuns: 0,
        runsOutsideEmittedEvents: 0,
        wrongHandler: 0,
        wrongOrders: 0,
        wrongShipments: 0,
        exhausted: 0,
        refusedConfirms: 0,
        unexpected: 0,
        fiveXxOutsideTable: 0,
      });
      // The faults really happened (a run without them would prove nothing).
      expect(figures.duplicateDeliveries).toBeGreaterThan(0);
      expect(figures.injectedFailures).toBeGreaterThan(0);
      expect(figures.storeOutages).toBeGreaterThan(0);
      expect(crashes.uncaught).toBe(0);
    });
  });
}
