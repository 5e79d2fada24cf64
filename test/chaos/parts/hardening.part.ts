import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { MemoryIdempotencyStore, PaymentsModule, type PaymentEvent } from '../../../lib/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { deferred, type Deferred } from '../../fixtures/webhooks/deferred.js';
import {
  FulfilmentHandler,
  PAYMENT_HANDLER_FIXTURES,
  PaymentAuditHandler,
} from '../../fixtures/webhooks/payment-handlers.fixture.js';
import {
  fixtureOptions,
  post,
  sign,
  startWebhookApp,
  type AdapterName,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';
import type { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { CHAOS_SEED } from '../support/chaos-sizes.js';
import { auditLogger, CrashWatch, leakAudit, PARTS, progress, report } from '../support/chaos.context.js';
import { SeededRandom } from '../support/seeded-random.js';

const PATH = 'payments/webhooks';

/** The fixture apps log through the chaos audit logger (it has the methods the fixture calls). */
const asFixtureLogger = (): CapturingLogger => auditLogger as unknown as CapturingLogger;

/** Writes a delivery's head and `partial` bytes of a body that announced 4000, then disconnects or keeps the socket. */
function partialPost(baseUrl: string, contentType: string, partial: number, disconnect: boolean): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST /${PATH} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: ${contentType}\r\nContent-Length: 4000\r\n` +
          `webhook-id: msg_chaos\r\nwebhook-timestamp: ${Math.floor(Date.now() / 1000)}\r\nwebhook-signature: v1,AAAA\r\n\r\n`,
      );
      socket.write(Buffer.alloc(partial, '{'), () => {
        if (disconnect) {
          socket.destroy();
          resolve('');
        }
      });
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

async function openConnections(app: WebhookApp): Promise<number> {
  const server = app.app.getHttpServer() as { getConnections(cb: (error: Error | null, count: number) => void): void };
  return new Promise((resolve) => server.getConnections((_, count) => resolve(count)));
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise<void>((resolve) => setTimeout(resolve, 2));
  }
}

/** An id in another case: all upper, or every other hex letter upper. */
function caseVariant(id: string, random: SeededRandom): string {
  if (random.next() < 0.5) return id.toUpperCase();
  return id.replace(/[a-f]/g, (c, i: number) => (i % 2 === 0 ? c.toUpperCase() : c));
}

/**
 * What the hardening findings of issue 12 taught, under load: case variants of event ids on both
 * adapters (handlers run once per event), a memory store full of live leases (503, never a second
 * run), clients that abort mid-body and drip-feed bodies (no error line, 408). `events` case-variant
 * events per adapter.
 */
export function describeHardening(events: number): void {
  describe(`hardening findings under load (${events} case-variant events per adapter, full store, aborted and slow bodies)`, () => {
    const random = new SeededRandom(CHAOS_SEED).fork('hardening');
    const crashes = new CrashWatch();
    const tally = {
      casesRun: 0,
      doubleRuns: 0,
      lostEvents: 0,
      wrongAnswers: 0,
      clientErrorLines: 0,
      deliveries: 0,
      answers409: 0,
      answers503: 0,
    };
    let started = 0;
    let auditMark = leakAudit.mark();
    const apps: WebhookApp[] = [];

    const boot = async (
      adapter: AdapterName,
      webhooks: Parameters<typeof fixtureOptions>[0],
      extra: { bodyParser?: boolean; rawBody?: boolean } = {},
    ) => {
      const app = await startWebhookApp({
        adapter,
        logger: asFixtureLogger(),
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRoot(fixtureOptions(webhooks)),
        ...extra,
      });
      apps.push(app);
      Logger.overrideLogger(auditLogger);
      return app;
    };

    beforeAll(() => {
      started = Date.now();
      auditMark = leakAudit.mark();
      crashes.install();
    });

    afterAll(async () => {
      for (const app of apps) await app.close();
      crashes.uninstall();
      const durationS = (Date.now() - started) / 1000;
      progress(`${PARTS.hardening}: ${tally.casesRun} cases in ${durationS.toFixed(1)} s`);
      report.record(PARTS.hardening, { ...tally, crashes: crashes.uncaught, durationS, ...leakAudit.since(auditMark) });
    });

    it.each(['express', 'fastify'] as const)(
      '[W4] case variants of event ids on %s: every handler runs once per event',
      async (adapter) => {
        const before = { ...tally };
        const app = await boot(adapter, { store: new MemoryIdempotencyStore(), requireHttps: false });
        const url = `${app.baseUrl}/${PATH}`;
        const fulfilment = app.app.get(FulfilmentHandler);
        const audit = app.app.get(PaymentAuditHandler);
        const batch: PaymentEvent[] = Array.from({ length: events }, () =>
          createPaymentEvent('payment_intent.succeeded'),
        );
        const OK = new Set(['200:handled', '200:duplicate', '409:busy']);
        // Per event: two deliveries at once (one canonical, one variant, in a random order), then a late variant.
        const results = await Promise.all(
          batch.map(async (event) => {
            const pair = [event, { ...event, id: caseVariant(event.id, random) }];
            if (random.next() < 0.5) pair.reverse();
            const first = await Promise.all(pair.map((e) => post(url, sign(e))));
            const late = await post(url, sign({ ...event, id: caseVariant(event.id, random) }));
            return [...first, late];
          }),
        );
        for (const answers of results) {
          for (const answer of answers) {
            tally.deliveries += 1;
            if (answer.status === 409) tally.answers409 += 1;
            const outcome = (answer.body as { outcome?: string }).outcome;
            if (!OK.has(`${answer.status}:${outcome}`)) tally.wrongAnswers += 1;
          }
          // The late delivery comes after both first ones finished: it must be a duplicate.
          if ((answers[2]!.body as { outcome?: string }).outcome !== 'duplicate') tally.wrongAnswers += 1;
        }
        for (const event of batch) {
          tally.casesRun += 1;
          for (const handler of [fulfilment, audit]) {
            const runs = handler.callsFor(event.id).length;
            if (runs > 1) tally.doubleRuns += runs - 1;
            if (runs === 0) tally.lostEvents += 1;
          }
        }
        expect({
          doubleRuns: tally.doubleRuns - before.doubleRuns,
          lostEvents: tally.lostEvents - before.lostEvents,
          wrongAnswers: tally.wrongAnswers - before.wrongAnswers,
        }).toEqual({ doubleRuns: 0, lostEvents: 0, wrongAnswers: 0 });
      },
    );

    it('[W4] a memory store full of running handlers answers 503 to new events, 409 to copies, and loses none once they finish', async () => {
      const LIVE = 4;
      // One record per intent, holding both handlers' runs: LIVE events of LIVE intents fill the store.
      const app = await boot('express', {
        store: new MemoryIdempotencyStore({ maxEntries: LIVE }),
        requireHttps: false,
      });
      const url = `${app.baseUrl}/${PATH}`;
      const fulfilment = app.app.get(FulfilmentHandler);
      const audit = app.app.get(PaymentAuditHandler);
      const gates = new Map<string, Deferred>();
      fulfilment.behaviour = (event) => gates.get(event.id)?.promise;
      audit.behaviour = (event) => gates.get(event.id)?.promise;
      const slow = Array.from({ length: LIVE }, () => createPaymentEvent('payment_intent.succeeded'));
      for (const event of slow) gates.set(event.id, deferred());
      const running = slow.map((event) => post(url, sign(event)));
      await until(() => fulfilment.calls.length === LIVE && audit.calls.length === LIVE, 'the slow handlers to start');
      const before = { ...tally };

      const others = Array.from({ length: Math.max(20, Math.floor(events / 4)) }, () =>
        createPaymentEvent('payment_intent.succeeded'),
      );
      for (const event of others) {
        const answer = await post(url, sign(event));
        tally.deliveries += 1;
        if (answer.status === 503) tally.answers503 += 1;
        else tally.wrongAnswers += 1;
      }
      for (const event of slow) {
        const copy = await post(url, sign({ ...event, id: caseVariant(event.id, random) }));
        tally.deliveries += 1;
        if (copy.status === 409) tally.answers409 += 1;
        else tally.wrongAnswers += 1;
      }
      for (const gate of gates.values()) gate.resolve();
      for (const answer of await Promise.all(running)) if (answer.status !== 200) tally.wrongAnswers += 1;
      // The service redelivers what was refused: now there is room.
      for (const event of others) {
        const answer = await post(url, sign(event));
        tally.deliveries += 1;
        if (answer.status !== 200) tally.wrongAnswers += 1;
      }
      for (const event of [...slow, ...others]) {
        tally.casesRun += 1;
        for (const handler of [fulfilment, audit]) {
          const runs = handler.callsFor(event.id).length;
          if (runs > 1) tally.doubleRuns += runs - 1;
          if (runs === 0) tally.lostEvents += 1;
        }
      }
      expect({
        doubleRuns: tally.doubleRuns - before.doubleRuns,
        lostEvents: tally.lostEvents - before.lostEvents,
        wrongAnswers: tally.wrongAnswers - before.wrongAnswers,
      }).toEqual({ doubleRuns: 0, lostEvents: 0, wrongAnswers: 0 });
    });

    it('clients that abort mid-body (module body reader and host JSON parser, Express) cause no error line and reach no handler', async () => {
      // Fastify's variant runs in a plain Node child in test/e2e/webhooks/hardening.spec.ts: inside Jest's VM context
      // Node's own errors fail Nest's `instanceof Error`, so Nest would log lines a real app does not.
      const reader = await boot('express', { requireHttps: false }, { bodyParser: false, rawBody: false });
      const hostParser = await boot('express', { requireHttps: false }, { bodyParser: true, rawBody: true });
      const errorsBefore = auditLogger.errorLines;
      const aborts = Math.max(50, Math.floor(events / 2));
      for (const app of [reader, hostParser]) {
        for (let i = 0; i < aborts; i += 1) {
          await partialPost(
            app.baseUrl,
            i % 2 === 0 ? 'application/json' : 'text/plain',
            1 + Math.floor(random.next() * 200),
            true,
          );
          tally.casesRun += 1;
        }
        await until(async () => (await openConnections(app)) === 0, 'the server to see every client go');
        if (app.app.get(FulfilmentHandler).calls.length > 0) tally.wrongAnswers += 1;
      }
      for (let turns = 0; turns < 20; turns += 1) await new Promise((resolve) => setImmediate(resolve));
      tally.clientErrorLines += auditLogger.errorLines - errorsBefore;
      expect(auditLogger.errorLines - errorsBefore).toBe(0);
    });

    it('drip-fed bodies are answered 408 within webhooks.bodyTimeoutMs, with no error line', async () => {
      const app = await boot(
        'express',
        { requireHttps: false, bodyTimeoutMs: 250 },
        { bodyParser: false, rawBody: false },
      );
      const errorsBefore = auditLogger.errorLines;
      const wrongBefore = tally.wrongAnswers;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => partialPost(app.baseUrl, 'application/json', 10, false)),
      );
      for (const answer of answers) {
        tally.casesRun += 1;
        tally.deliveries += 1;
        if (!answer.startsWith('HTTP/1.1 408 ')) tally.wrongAnswers += 1;
      }
      tally.clientErrorLines += auditLogger.errorLines - errorsBefore;
      expect({ wrong: tally.wrongAnswers - wrongBefore, errorLines: auditLogger.errorLines - errorsBefore }).toEqual({
        wrong: 0,
        errorLines: 0,
      });
    });
  });
}
