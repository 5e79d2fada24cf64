import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { FUZZ_RUNS } from '../support/chaos-sizes.js';
import { auditLogger, CrashWatch, leakAudit, PARTS, progress, report } from '../support/chaos.context.js';
import { heapUsedAfterGc, MB } from '../support/heap.probe.js';
import { fuzzCase } from '../fuzz/fuzz-case.arbitraries.js';
import type { EventBodySpec, FuzzCaseSpec } from '../fuzz/fuzz-case.model.js';
import { boundHandlers } from '../fuzz/fuzz-delivery.oracle.js';
import {
  FUZZ_API_KEY,
  FUZZ_ENDPOINT_ID,
  FUZZ_FOREIGN_STANDARD_SECRET,
  FUZZ_HMAC,
  FUZZ_STANDARD_SECRETS,
  startFuzzReceiver,
  type FuzzAdapter,
  type FuzzReceiver,
  type FuzzScheme,
} from '../fuzz/fuzz-receiver.fixture.js';
import { buildRequest, type BuiltRequest, type ReplayableEvent } from '../fuzz/fuzz-request.builder.js';
import { FuzzRequestSender, type FuzzAnswer } from '../fuzz/fuzz-request.sender.js';

/** Heap growth allowed between the end of the warm-up and the end of a run (generous: it is a leak detector, not a benchmark). */
export const HEAP_GROWTH_BOUND_MB = 30;
const RECENT_EVENTS_KEPT = 500;

interface AcceptedEvent {
  types: Set<string>;
  /** Types answered 200 while not failing: their handlers must have completed, once. */
  mustHaveCompleted: Set<string>;
}

/** Everything one adapter's run counts for the table. */
interface FuzzTally {
  cases: number;
  validEventsSent: number;
  handlerRunsWithoutValidSignature: number;
  lostEvents: number;
  doubleRuns: number;
  fiveXxOutsideTable: number;
  wrongAnswers: number;
  answers500: number;
  injectedFailures: number;
  problems: string[];
}

const newTally = (): FuzzTally => ({
  cases: 0,
  validEventsSent: 0,
  handlerRunsWithoutValidSignature: 0,
  lostEvents: 0,
  doubleRuns: 0,
  fiveXxOutsideTable: 0,
  wrongAnswers: 0,
  answers500: 0,
  injectedFailures: 0,
  problems: [],
});

const is4xx = (status: number) => status >= 400 && status < 500;

function describeCase(request: BuiltRequest, spec: FuzzCaseSpec, answer: FuzzAnswer): string {
  const got =
    answer.status === undefined
      ? `${answer.reason} (${answer.detail})`
      : `${answer.status} ${answer.body.slice(0, 160)}`;
  const headers = request.headers.map(([n, v]) => `${n}: ${v.slice(0, 60)}`).join(' | ');
  return `${spec.category} -> ${request.target} ${request.method} ${request.path} via ${request.transport}; expect ${JSON.stringify(request.expect)}; headers ${headers}; body ${request.body.length} B ${JSON.stringify(request.body.subarray(0, 120).toString('latin1'))}; got ${got}`;
}

/**
 * Item 1: the running receiver under fast-check on one adapter. Two receivers (Standard Webhooks and
 * HMAC) on real HTTP; each case is judged against the suite's own oracle.
 */
export function describeReceiverFuzz(adapter: FuzzAdapter, runs: number, seed: number): void {
  const part = adapter === 'express' ? PARTS.fuzzExpress : PARTS.fuzzFastify;

  describe(`receiver fuzz on ${adapter} (${runs} cases, FUZZ_SEED=${seed})`, () => {
    const receivers = {} as Record<FuzzScheme, FuzzReceiver>;
    const senders = {} as Record<FuzzScheme, FuzzRequestSender>;
    const crashes = new CrashWatch();
    const tally = newTally();
    const accepted = new Map<string, AcceptedEvent>();
    let started = 0;
    let auditMark = leakAudit.mark();

    beforeAll(async () => {
      started = Date.now();
      auditMark = leakAudit.mark();
      crashes.install();
      leakAudit.addApiKey('fuzz API key', FUZZ_API_KEY);
      FUZZ_STANDARD_SECRETS.forEach((secret, i) => leakAudit.addWebhookSecret(`fuzz standard secret ${i}`, secret));
      leakAudit.addWebhookSecret('fuzz foreign secret', FUZZ_FOREIGN_STANDARD_SECRET);
      FUZZ_HMAC.secrets.forEach((secret, i) => leakAudit.addWebhookSecret(`fuzz hmac secret ${i}`, secret));
      leakAudit.addWebhookSecret('fuzz hmac foreign secret', FUZZ_HMAC.foreignSecret);
      for (const scheme of ['standard', 'hmac'] as const) {
        receivers[scheme] = await startFuzzReceiver(adapter, scheme, auditLogger);
        senders[scheme] = new FuzzRequestSender(receivers[scheme].port);
      }
    });

    afterAll(async () => {
      for (const scheme of ['standard', 'hmac'] as const) {
        senders[scheme]?.close();
        await receivers[scheme]?.close();
      }
      progress(`${part}: ${tally.cases} cases in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      crashes.uninstall();
      report.record(part, {
        casesRun: tally.cases,
        handlerRunsWithoutValidSignature: tally.handlerRunsWithoutValidSignature,
        lostEvents: tally.lostEvents,
        doubleRuns: tally.doubleRuns,
        fiveXxOutsideTable: tally.fiveXxOutsideTable,
        wrongAnswers: tally.wrongAnswers,
        crashes: crashes.uncaught,
        events: tally.validEventsSent,
        deliveries: tally.cases,
        answers500: tally.answers500,
        injectedFailures: tally.injectedFailures,
        durationS: (Date.now() - started) / 1000,
        ...leakAudit.since(auditMark),
      });
    });

    /** Sends one built request and judges the answer and the handler runs it caused. */
    async function runCase(request: BuiltRequest, spec: FuzzCaseSpec): Promise<string | undefined> {
      const receiver = receivers[request.target];
      const id = request.expect.eventId;
      const key = id === undefined ? undefined : `${request.target}:${id}`;
      const invocationsBefore = receivers.standard.recorder.invocations + receivers.hmac.recorder.invocations;
      const handlers = request.expect.eventType === undefined ? [] : boundHandlers(request.expect.eventType);
      const entryBefore = id === undefined ? undefined : receiver.recorder.byEvent.get(id);
      const pendingHandlers = handlers.filter((h) => (entryBefore?.[h].completed ?? 0) === 0).length;

      const answer = await senders[request.target].send(request);
      tally.cases += 1;
      if (answer.status !== undefined) leakAudit.scan(answer.body, `${adapter} answer`);
      const delta = receivers.standard.recorder.invocations + receivers.hmac.recorder.invocations - invocationsBefore;
      const problems: string[] = [];

      if (request.expect.accepted && key !== undefined) {
        tally.validEventsSent += 1;
        let entry = accepted.get(key);
        if (!entry) accepted.set(key, (entry = { types: new Set(), mustHaveCompleted: new Set() }));
        entry.types.add(request.expect.eventType!);
        if (answer.status === 200 && !request.expect.failing) entry.mustHaveCompleted.add(request.expect.eventType!);
      }
      if (!request.expect.accepted && delta > 0) {
        tally.handlerRunsWithoutValidSignature += delta;
        problems.push(`${delta} handler run(s) for a request that is not a validly signed, accepted event`);
      }

      if (answer.status === undefined) {
        const harmless = request.transport === 'raw' && answer.reason !== 'timeout';
        if (!harmless) {
          tally.wrongAnswers += 1;
          problems.push(`no answer: ${answer.reason}`);
        }
        return problems.length ? problems.join('; ') : undefined;
      }

      const { status } = answer;
      const { exactStatus, frameworkMayRefuse } = request.expect;
      if (status >= 500) {
        if (status === 500 && exactStatus === 500) {
          tally.answers500 += 1;
          tally.injectedFailures += 1;
        } else {
          tally.fiveXxOutsideTable += 1;
          problems.push(`5xx outside the table: ${status}`);
        }
      }
      if (exactStatus === undefined) {
        if (!is4xx(status)) {
          tally.wrongAnswers += 1;
          problems.push(`expected a 4xx refusal, got ${status}`);
        }
      } else if (status !== exactStatus && !(frameworkMayRefuse && is4xx(status))) {
        tally.wrongAnswers += 1;
        problems.push(`expected ${exactStatus}${frameworkMayRefuse ? ' or a 4xx' : ''}, got ${status}`);
      }
      if (request.expect.accepted) {
        const expectedDelta = status === exactStatus ? pendingHandlers : 0;
        if (delta !== expectedDelta) {
          tally.wrongAnswers += 1;
          problems.push(`expected ${expectedDelta} handler run(s), saw ${delta}`);
        }
      }
      return problems.length ? `${problems.join('; ')} :: ${describeCase(request, spec, answer)}` : undefined;
    }

    it('[W1][W5] refuses a signed delivery whose content type the framework keeps no raw bytes for with a 4xx, never a 5xx', async () => {
      const event = createPaymentEvent('payment_intent.succeeded', { webhook_id: FUZZ_ENDPOINT_ID });
      const spec = (contentType: string): FuzzCaseSpec => ({
        category: 'valid',
        target: 'standard',
        method: 'POST',
        path: '/payments/webhooks',
        body: { kind: 'text', text: JSON.stringify(event) },
        signature: {
          kind: 'valid',
          secretIndex: 0,
          skewSeconds: 0,
          mixedCaseNames: false,
          junkEntries: [],
          upperHex: false,
        },
        contentType,
        extraHeaders: [],
        transport: 'http',
        chunkSizes: [],
        replayPick: 0,
        raw: null,
      });
      for (const contentType of ['text/plain', 'text/plain; charset=utf-8']) {
        const request = buildRequest(spec(contentType), {
          sequence: 0,
          nowSeconds: Math.floor(Date.now() / 1000),
          port: receivers.standard.port,
          recent: [],
        });
        expect(request.expect.accepted).toBe(true);
        // runCase allows exactly 200, or a 4xx refusal: nothing else, and no 5xx.
        expect(await runCase(request, spec(contentType))).toBeUndefined();
      }
    });

    it("[W11] an event named like a wildcard ('*', 'payment_intent.*') reaches no handler: a pattern matches names, not itself", async () => {
      for (const [i, type] of ['*', 'payment_intent.*', 'charge.*', 'setup_intent.*'].entries()) {
        const spec = livenessCase('standard');
        const body = { ...(spec.body as EventBodySpec), id: '00000000-0000-4000-8000-00000000000' + String(i), type };
        const request = buildRequest(
          { ...spec, body },
          {
            sequence: 500_000 + i,
            nowSeconds: Math.floor(Date.now() / 1000),
            port: receivers.standard.port,
            recent: [],
          },
        );
        expect(request.expect).toMatchObject({ accepted: true, exactStatus: 200 });
        // runCase requires exactly 200 and as many handler runs as the oracle binds: none for these names.
        expect(await runCase(request, { ...spec, body })).toBeUndefined();
      }
    });

    it(`${runs} random cases: handlers run only for validly signed events, exactly once; no 5xx outside the table; no crash; flat heap`, async () => {
      const recent: ReplayableEvent[] = [];
      const warmup = Math.min(runs, Math.max(200, Math.floor(runs / 10)));
      let heapBaseline: number | undefined;
      let sequence = 0;
      let failure: string | undefined;

      const property = fc.asyncProperty(fuzzCase, async (spec) => {
        sequence += 1;
        if (sequence === warmup) heapBaseline = heapUsedAfterGc();
        const request = buildRequest(spec, {
          sequence,
          nowSeconds: Math.floor(Date.now() / 1000),
          port: receivers[spec.target].port,
          recent,
        });
        const problem = await runCase(request, spec);
        if (request.expect.accepted && request.body.length > 0) {
          recent.push({ target: request.target, body: request.body });
          if (recent.length > RECENT_EVENTS_KEPT) recent.shift();
        }
        if (problem !== undefined) {
          tally.problems.push(problem);
          failure ??= problem;
          return false;
        }
        return true;
      });

      let assertError: unknown;
      try {
        await fc.assert(property, { numRuns: runs, seed, endOnFailure: true });
      } catch (error) {
        assertError = error;
      }

      // Still alive: each receiver still takes a valid delivery.
      for (const scheme of ['standard', 'hmac'] as const) {
        const spec = livenessCase(scheme);
        const liveness = buildRequest(spec, {
          sequence: runs + 1_000_000,
          nowSeconds: Math.floor(Date.now() / 1000),
          port: receivers[scheme].port,
          recent: [],
        });
        const problem = await runCase(liveness, spec);
        if (problem !== undefined || !receivers[scheme].app.getHttpServer().listening) {
          crashes.uncaught += 1;
          tally.problems.push(`liveness: ${problem ?? 'server not listening'}`);
        }
      }

      // Whatever the property saw, the end state is judged as a whole.
      const heapEnd = heapUsedAfterGc();
      const growthMb = heapBaseline === undefined ? 0 : (heapEnd - heapBaseline) / MB;
      report.record(part, { heapGrowthMb: growthMb, heapOverBound: growthMb > HEAP_GROWTH_BOUND_MB ? 1 : 0 });

      for (const scheme of ['standard', 'hmac'] as const) {
        for (const [id, counts] of receivers[scheme].recorder.byEvent) {
          const entry = accepted.get(`${scheme}:${id}`);
          if (!entry) tally.handlerRunsWithoutValidSignature += counts.any.invoked + counts.succeeded.invoked;
          tally.doubleRuns += Math.max(0, counts.any.completed - 1) + Math.max(0, counts.succeeded.completed - 1);
        }
      }
      for (const [key, entry] of accepted) {
        const [scheme, id] = [key.slice(0, key.indexOf(':')) as FuzzScheme, key.slice(key.indexOf(':') + 1)];
        const counts = receivers[scheme].recorder.byEvent.get(id);
        for (const type of entry.mustHaveCompleted) {
          for (const handler of boundHandlers(type))
            if ((counts?.[handler].completed ?? 0) === 0) tally.lostEvents += 1;
        }
      }

      const polluted = ({} as Record<string, unknown>)['polluted'] !== undefined;
      if (polluted) tally.wrongAnswers += 1;

      if (assertError !== undefined) leakAudit.scanError(assertError, 'fast-check failure');
      expect({
        failure,
        firstProblems: tally.problems.slice(0, 5),
        assertError: assertError === undefined ? undefined : String(assertError).slice(0, 2000),
      }).toEqual({
        failure: undefined,
        firstProblems: [],
        assertError: undefined,
      });
      expect(polluted).toBe(false);
      expect(growthMb).toBeLessThan(HEAP_GROWTH_BOUND_MB);
      expect(crashes.uncaught).toBe(0);
      expect({
        handlerRunsWithoutValidSignature: tally.handlerRunsWithoutValidSignature,
        lostEvents: tally.lostEvents,
        doubleRuns: tally.doubleRuns,
        fiveXxOutsideTable: tally.fiveXxOutsideTable,
      }).toEqual({ handlerRunsWithoutValidSignature: 0, lostEvents: 0, doubleRuns: 0, fiveXxOutsideTable: 0 });
    });
  });
}

/** A plain valid `payment_intent.succeeded` for `scheme`: sent after the run to prove the receiver is alive. */
function livenessCase(scheme: FuzzScheme): FuzzCaseSpec {
  return {
    category: 'valid',
    target: scheme,
    method: 'POST',
    path: '/payments/webhooks',
    body: {
      kind: 'event',
      id: '00000000-0000-4000-8000-000000000000',
      allowedEndpoint: true,
      otherEndpointId: FUZZ_ENDPOINT_ID,
      type: 'payment_intent.succeeded',
      fail: false,
      amount: 1,
      extraData: {},
      metadata: null,
      format: 'compact',
      pollute: false,
    },
    signature: {
      kind: 'valid',
      secretIndex: 0,
      skewSeconds: 0,
      mixedCaseNames: false,
      junkEntries: [],
      upperHex: false,
    },
    contentType: 'application/json',
    extraHeaders: [],
    transport: 'http',
    chunkSizes: [],
    replayPick: 0,
    raw: null,
  };
}

/** FUZZ_RUNS split over the two adapters (Express gets the odd one). */
export function fuzzRunsPerAdapter(): Record<FuzzAdapter, number> {
  return { express: Math.ceil(FUZZ_RUNS / 2), fastify: Math.floor(FUZZ_RUNS / 2) };
}
