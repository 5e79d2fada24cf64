import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { PaymentsRateLimitError, type PaymentsService } from '../../../lib/index.js';
import { PaymentsSimulator } from '../../../lib/testing/index.js';
import { bootClient, TEST_API_KEY } from '../../e2e/client/support/client-fixture.js';
import type { FakeRuntime } from '../../e2e/client/support/fake-runtime.js';
import { CHAOS_SEED } from '../support/chaos-sizes.js';
import { auditLogger, leakAudit, PARTS, progress, report } from '../support/chaos.context.js';
import { SeededRandom } from '../support/seeded-random.js';

/** Retry-After of every 429 of the storm, in seconds. */
const RETRY_AFTER_SECONDS = 2;

/** One client (its own PaymentsService and injected runtime) running calls one after the other. */
interface LaneSpec {
  maxRetries: number;
  /** Below Retry-After on one lane: its waits must be capped at this. */
  maxRetryDelayMs?: number;
}
const LANES: readonly LaneSpec[] = [
  { maxRetries: 0 },
  { maxRetries: 1 },
  { maxRetries: 2 },
  { maxRetries: 3 },
  { maxRetries: 4 },
  { maxRetries: 6 },
  { maxRetries: 2, maxRetryDelayMs: 1500 },
  { maxRetries: 3 },
];

interface Lane extends LaneSpec {
  payments: PaymentsService;
  runtime: FakeRuntime;
  close(): Promise<void>;
  paymentIntentIds: string[];
  setupIntentIds: string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Item 4: `calls` API calls from 8 concurrent clients (maxRetries 0 to 6) while the simulator answers
 * every second API request 429 with `Retry-After: 2`. Each client's runtime records its sleeps and
 * returns at once; since a lane runs one call at a time, the requests of a call are its sleeps + 1,
 * and their sum must equal the simulator's own count.
 */
export function describeRateLimitStorm(calls: number): void {
  describe(`client under a 429 storm (${calls} calls, half of all answers 429 with Retry-After: ${RETRY_AFTER_SECONDS})`, () => {
    const random = new SeededRandom(CHAOS_SEED).fork('storm');
    let sim: PaymentsSimulator;
    const lanes: Lane[] = [];
    let started = 0;
    let auditMark = leakAudit.mark();

    beforeAll(async () => {
      started = Date.now();
      auditMark = leakAudit.mark();
      leakAudit.addApiKey('storm API key', TEST_API_KEY);
      sim = new PaymentsSimulator({ apiKeys: [TEST_API_KEY] });
      const baseUrl = await sim.start();
      for (const spec of LANES) {
        const http = {
          maxRetries: spec.maxRetries,
          timeoutMs: 10_000,
          ...(spec.maxRetryDelayMs === undefined ? {} : { maxRetryDelayMs: spec.maxRetryDelayMs }),
        };
        const client = await bootClient(baseUrl, { http });
        lanes.push({ ...spec, ...client, paymentIntentIds: [], setupIntentIds: [] });
      }
      // The testing module installs its own logger on compile: route every line back to the audit.
      Logger.overrideLogger(auditLogger);
    });

    afterAll(async () => {
      for (const lane of lanes) await lane.close();
      await sim?.stop();
      progress(`${PARTS.storm}: ${calls} calls in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      report.record(PARTS.storm, { durationS: (Date.now() - started) / 1000, ...leakAudit.since(auditMark) });
    });

    it('[L1] every call completes or fails with PaymentsRateLimitError, within maxRetries, each wait exactly Retry-After (capped)', async () => {
      sim.controls.rateLimit({ ratio: 0.5, retryAfterSeconds: RETRY_AFTER_SECONDS });
      const before = sim.requestCounts();
      const tally = {
        completed: 0,
        rateLimitErrors: 0,
        otherErrors: 0,
        wrongResults: 0,
        overMaxRetries: 0,
        badWaits: 0,
        requests: 0,
        waits: 0,
        errorAttemptsMismatch: 0,
      };
      const otherErrors: string[] = [];

      /** One call on `lane`, chosen by the PRNG; returns whether its result is right. */
      const callOnce = async (lane: Lane, pick: number): Promise<boolean> => {
        const { payments } = lane;
        if (pick < 0.3 || lane.paymentIntentIds.length === 0) {
          const intent = await payments.paymentIntents.create({ amount: 100 + Math.floor(pick * 10_000) });
          if (typeof intent.id !== 'string' || !UUID.test(intent.id)) return false;
          lane.paymentIntentIds.push(intent.id);
          return true;
        }
        if (pick < 0.55) {
          const id = lane.paymentIntentIds[Math.floor(pick * 1e6) % lane.paymentIntentIds.length]!;
          return (await payments.paymentIntents.retrieve(id)).id === id;
        }
        if (pick < 0.7 || lane.setupIntentIds.length === 0) {
          const intent = await payments.setupIntents.create({});
          if (typeof intent.id !== 'string' || !UUID.test(intent.id)) return false;
          lane.setupIntentIds.push(intent.id);
          return true;
        }
        if (pick < 0.82) {
          const id = lane.setupIntentIds[Math.floor(pick * 1e6) % lane.setupIntentIds.length]!;
          return (await payments.setupIntents.retrieve(id)).id === id;
        }
        if (pick < 0.9) {
          const endpoint = await payments.webhookEndpoints.create({
            url: 'https://merchant.example/payments/webhooks',
            events: ['payment_intent.succeeded'],
          });
          leakAudit.addWebhookSecret('storm endpoint secret', endpoint.secret);
          return UUID.test(endpoint.id);
        }
        const list = await payments.request<{ data: unknown[] }>({ method: 'GET', path: '/webhook_requests' });
        return Array.isArray(list.data);
      };

      const runLane = async (lane: Lane, count: number): Promise<void> => {
        const expectedWait = Math.min(RETRY_AFTER_SECONDS * 1000, lane.maxRetryDelayMs ?? 30_000);
        for (let i = 0; i < count; i++) {
          const sleepsBefore = lane.runtime.sleeps.length;
          let error: unknown;
          let right = false;
          try {
            right = await callOnce(lane, random.next());
          } catch (caught) {
            error = caught;
            leakAudit.scanError(caught, 'storm call error');
          }
          const waits = lane.runtime.sleeps.slice(sleepsBefore);
          const requests = waits.length + 1;
          tally.requests += requests;
          tally.waits += waits.length;
          if (requests > lane.maxRetries + 1) tally.overMaxRetries += 1;
          tally.badWaits += waits.filter((ms) => ms !== expectedWait).length;
          if (error === undefined) {
            tally.completed += 1;
            if (!right) tally.wrongResults += 1;
          } else if (error instanceof PaymentsRateLimitError) {
            tally.rateLimitErrors += 1;
            // It gave up only after every retry allowed, and says how many requests it sent.
            if (error.attempts !== requests || requests !== lane.maxRetries + 1) tally.errorAttemptsMismatch += 1;
          } else {
            tally.otherErrors += 1;
            otherErrors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
          }
        }
      };

      const perLane = LANES.map((_, i) => Math.floor(calls / LANES.length) + (i < calls % LANES.length ? 1 : 0));
      await Promise.all(lanes.map((lane, i) => runLane(lane, perLane[i]!)));
      sim.controls.rateLimit(false);

      const after = sim.requestCounts();
      const apiRequests = after.api - before.api;
      const rateLimited = after.rateLimited - before.rateLimited;
      // Every request the lanes counted is one the simulator saw, and every 429 is a wait or a final error.
      const countMismatch =
        (apiRequests !== tally.requests ? 1 : 0) + (rateLimited !== tally.waits + tally.rateLimitErrors ? 1 : 0);

      report.record(PARTS.storm, {
        casesRun: calls,
        wrongAnswers: tally.otherErrors + tally.wrongResults + tally.errorAttemptsMismatch + countMismatch,
        callsOverMaxRetries: tally.overMaxRetries,
        waitsIgnoringRetryAfter: tally.badWaits,
        deliveries: apiRequests,
        rateLimited,
        rateLimitErrors: tally.rateLimitErrors,
      });

      expect(otherErrors).toEqual([]);
      expect({ ...tally, apiRequests, rateLimited }).toEqual({
        ...tally,
        otherErrors: 0,
        wrongResults: 0,
        overMaxRetries: 0,
        badWaits: 0,
        errorAttemptsMismatch: 0,
        apiRequests: tally.requests,
        rateLimited: tally.waits + tally.rateLimitErrors,
      });
      expect(tally.completed + tally.rateLimitErrors).toBe(calls);
      // The storm really was one: half of all answers were 429, and both ends of the contract were reached.
      expect(Math.abs(rateLimited * 2 - apiRequests)).toBeLessThanOrEqual(1);
      expect(tally.rateLimitErrors).toBeGreaterThan(0);
      expect(tally.completed).toBeGreaterThan(0);
    });
  });
}
