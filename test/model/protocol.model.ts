import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger, type LoggerService } from '@nestjs/common';
import { explore } from './model-explorer.js';
import { RELEASES, type Scenario } from './model-world.js';

/*
 * The exhaustive model check of the exactly-once protocol (issue 40): the production dispatcher,
 * reconciler, watch-list settlement and inbox over the production in-memory engine, every interleaving
 * of their store calls enumerated (not sampled) for up to three actors on one intent, each call allowed
 * to fail before applying, fail after applying or time out (landing later or never), and the clock
 * allowed to jump past every lease. Invariants: each (intent, state, handler) effect exactly once (a
 * state that recurs: once per event), beyond the documented window (a completion lost, a lease lapsed
 * while the handler ran); nothing watched forever; no claim left held; at most one sweeper at a time.
 *
 *   npm run test:model                 every scenario
 *   MODEL=<name part> npm run test:model   the scenarios whose name contains it
 */
const E1 = '1e000000-0000-4000-8000-000000000001';
const E2 = '2e000000-0000-4000-8000-000000000002';

export const SCENARIOS: Array<Scenario & { bounds: { faults: number; lapses: number } }> = [
  {
    name: 'succeeded: webhook (reconciliation off), its redelivery (on), a sweep',
    state: 'succeeded',
    handlers: ['Shop.paid'],
    watched: true,
    actors: [
      { name: 'webhook', kind: 'webhook', release: RELEASES.off, event: E1 },
      { name: 'redelivery', kind: 'webhook', release: RELEASES.on, event: E1 },
      { name: 'sweep', kind: 'sweep', release: RELEASES.on },
    ],
    bounds: { faults: 1, lapses: 1 },
  },
  {
    name: 'issue 40 item 2: cancelled, handled by a release that counts only succeeded as terminal; the new release redelivers and sweeps',
    state: 'cancelled',
    handlers: ['Shop.released'],
    watched: true,
    actors: [
      { name: 'old-release', kind: 'webhook', release: RELEASES.succeededOnly, event: E1 },
      { name: 'new-release', kind: 'webhook', release: RELEASES.on, event: E1 },
      { name: 'new-sweep', kind: 'sweep', release: RELEASES.on },
    ],
    bounds: { faults: 1, lapses: 1 },
  },
  {
    name: 'a state that recurs: two events of requires_capture, and a sweep',
    state: 'requires_capture',
    handlers: ['Shop.capture'],
    watched: true,
    actors: [
      { name: 'first', kind: 'webhook', release: RELEASES.on, event: E1 },
      { name: 'second', kind: 'webhook', release: RELEASES.off, event: E2 },
      { name: 'sweep', kind: 'sweep', release: RELEASES.on },
    ],
    bounds: { faults: 1, lapses: 1 },
  },
  {
    name: 'two handlers of succeeded: a webhook and a sweep',
    state: 'succeeded',
    handlers: ['Shop.paid', 'Audit.any'],
    watched: true,
    actors: [
      { name: 'webhook', kind: 'webhook', release: RELEASES.on, event: E1 },
      { name: 'sweep', kind: 'sweep', release: RELEASES.on },
    ],
    // Two slots of one record, each step of one commuting with the other's: no lapse, or the runs explode.
    bounds: { faults: 1, lapses: 0 },
  },
  {
    name: 'two sweepers of one instance (two processes), the webhook lost',
    state: 'succeeded',
    handlers: ['Shop.paid'],
    watched: true,
    actors: [
      { name: 'sweep-a', kind: 'sweep', release: RELEASES.on },
      { name: 'sweep-b', kind: 'sweep', release: RELEASES.on },
    ],
    bounds: { faults: 1, lapses: 1 },
  },
  {
    name: 'the transactional inbox: a webhook and its redelivery on another release',
    state: 'succeeded',
    handlers: ['Shop.paid'],
    inbox: true,
    watched: true,
    actors: [
      { name: 'webhook', kind: 'webhook', release: RELEASES.on, event: E1 },
      { name: 'redelivery', kind: 'webhook', release: RELEASES.off, event: E1 },
    ],
    bounds: { faults: 1, lapses: 1 },
  },
  {
    name: 'the transactional inbox: a webhook and a sweep',
    state: 'succeeded',
    handlers: ['Shop.paid'],
    inbox: true,
    watched: true,
    actors: [
      { name: 'webhook', kind: 'webhook', release: RELEASES.on, event: E1 },
      { name: 'sweep', kind: 'sweep', release: RELEASES.on },
    ],
    bounds: { faults: 1, lapses: 1 },
  },
];

const silent: LoggerService = { log: () => undefined, warn: () => undefined, error: () => undefined };

describe('the exactly-once protocol, every interleaving (model check)', () => {
  beforeAll(() => Logger.overrideLogger(silent));
  afterAll(() => Logger.overrideLogger(new Logger()));
  const only = process.env.MODEL;
  for (const scenario of SCENARIOS.filter((s) => only === undefined || s.name.includes(only))) {
    it(`[W4] ${scenario.name}`, async () => {
      const started = Date.now();
      const found = await explore(scenario, scenario.bounds);
      const summary = `${scenario.name}: ${found.runs} runs, ${found.states} states, ${found.completed} to the end, ${Date.now() - started} ms`;
      console.log(summary);
      if (found.violation) {
        console.error(
          `model check: ${found.violation.violation.kind}: ${found.violation.violation.detail}\n  choices ${JSON.stringify(found.violation.choices)}\n  ${found.violation.trace.join('\n  ')}`,
        );
      }
      expect(found.violation?.violation).toBeUndefined();
      // It explored: runs reached the end and checked every invariant there.
      expect(found.completed).toBeGreaterThan(10);
    }, 600_000);
  }
});
