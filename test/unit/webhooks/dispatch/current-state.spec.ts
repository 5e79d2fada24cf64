import 'reflect-metadata';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  OnPaymentEvent,
  MemoryIdempotencyStore,
  PaymentsApiError,
  PaymentsConnectionError,
  PaymentsPermissionError,
  type PaymentEvent,
  type PaymentEventContext,
} from '../../../../lib/index.js';
import { createPaymentEvent, type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { MemoryIntentWatchStore, PaymentEventsRegistry } from '../../../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { dispatchPluginsOf } from '../../../../lib/webhooks/payments-webhooks.plugins.js';
import type { ResolvedWebhooksOptions } from '../../../../lib/webhooks/contracts/payments-webhooks.options.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

type Intent = { id: string; state: string };

/** The service as the dispatcher's client sees it: each intent's state, GETs counted, answers held on demand. */
class FakeService {
  readonly states = new Map<string, string>();
  gets = 0;
  failWith: unknown;
  /** Called once, after the next GET's answer is read (the service moving on meanwhile). */
  afterGet: (() => void) | undefined;
  private held: Array<() => void> | undefined;
  readonly paymentIntents = { retrieve: (id: string) => this.retrieve(id) };
  readonly setupIntents = { retrieve: (id: string) => this.retrieve(id) };

  hold(): void {
    this.held = [];
  }
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const go of held) go();
  }
  private async retrieve(id: string): Promise<Intent> {
    this.gets++;
    if (this.held) await new Promise<void>((resolve) => this.held!.push(resolve));
    if (this.failWith !== undefined) throw this.failWith;
    const state = this.states.get(id);
    const after = this.afterGet;
    this.afterGet = undefined;
    after?.();
    if (state === undefined) throw new PaymentsApiError({ status: 404, method: 'GET', path: `/payment_intents/${id}` });
    return { id, state };
  }
}

const runtime: PaymentsRuntime = { now: () => 1_000, sleep: async () => undefined, random: () => 0.5 };
const receivedAt = new Date('2026-01-01T00:00:00Z');

interface Run {
  handler: string;
  event: string;
  source: PaymentEventContext['source'];
  state: string | undefined;
}

function setup(
  options: {
    webhooks?: Record<string, unknown>;
    handlers?: Array<{ id: string; patterns: string[]; current?: boolean; invoke?: () => unknown }>;
    watchList?: MemoryIntentWatchStore;
  } = {},
) {
  const service = new FakeService();
  const store = new MemoryIdempotencyStore({ now: runtime });
  const runs: Run[] = [];
  const registry = new PaymentEventsRegistry();
  const handlers = options.handlers ?? [
    { id: 'Shop.capture', patterns: ['payment_intent.requires_capture'], current: true },
    { id: 'Shop.paid', patterns: ['payment_intent.succeeded'], current: true },
    { id: 'Shop.failed', patterns: ['payment_intent.errored_capture'], current: true },
  ];
  for (const handler of handlers) {
    registry.register({
      id: handler.id,
      patterns: handler.patterns as PaymentEvent['event'][],
      options: handler.current === undefined ? undefined : { current: handler.current },
      invoke: (event: PaymentEvent, ctx: PaymentEventContext) => {
        runs.push({
          handler: handler.id,
          event: event.event,
          source: ctx.source,
          state: (ctx.intent as Intent | undefined)?.state,
        });
        return handler.invoke?.();
      },
    });
  }
  const resolved = validatePaymentsOptions(fixtureOptions(options.webhooks ?? { reconcile: false }));
  const webhooks = resolved.webhooks as ResolvedWebhooksOptions;
  const plugins = dispatchPluginsOf(webhooks, { watchList: options.watchList });
  const dispatcher = new PaymentEventsDispatcher(registry, store, webhooks, runtime, service, undefined, plugins);
  const intentId = randomUUID();
  const event = (type: PaymentEvent['event'], id = intentId) =>
    createPaymentEvent(type, { data: { payment_intent: { id, state: type.split('.')[1] } } } as never);
  return { service, dispatcher, runs, intentId, event, store };
}

describe('current-state handling (opt-in per handler or per receiver)', () => {
  beforeAll(() => Logger.overrideLogger(new CapturingLogger()));

  it('succeeded, then a late requires_capture: the opted-in requires_capture handler does not run, the answer is superseded, the succeeded handler ran once', async () => {
    const { service, dispatcher, runs, intentId, event } = setup();
    service.states.set(intentId, 'succeeded');
    expect(await dispatcher.dispatch(event('payment_intent.succeeded'), { receivedAt })).toMatchObject({
      outcome: 'handled',
    });
    const late = await dispatcher.dispatch(event('payment_intent.requires_capture'), { receivedAt });
    expect(late.outcome).toBe('superseded');
    expect(late.handlers).toEqual([{ handler: 'Shop.capture', status: 'superseded' }]);
    expect(runs).toEqual([
      { handler: 'Shop.paid', event: 'payment_intent.succeeded', source: 'webhook', state: 'succeeded' },
    ]);
  });

  it('a superseded delivery dispatches the current state once, as reconciliation does (a retrieve run; its webhook is then a duplicate)', async () => {
    const { service, dispatcher, runs, intentId, event } = setup();
    service.states.set(intentId, 'succeeded');
    const late = await dispatcher.dispatch(event('payment_intent.requires_capture'), { receivedAt });
    expect(late.outcome).toBe('superseded');
    expect(runs).toEqual([
      { handler: 'Shop.paid', event: 'payment_intent.succeeded', source: 'reconciliation', state: 'succeeded' },
    ]);
    // The retrieve's run stands for the webhook of that state.
    expect(await dispatcher.dispatch(event('payment_intent.succeeded'), { receivedAt })).toMatchObject({
      outcome: 'duplicate',
    });
    expect(runs).toHaveLength(1);
    // Two GETs: the superseded delivery's, and one under the current state's own claim; the duplicate
    // was known from its claim: no retrieve.
    expect(service.gets).toBe(2);
  });

  it('the current state of a superseded delivery runs on a retrieve made under its own claim: an intent that moved on meanwhile is not run on the older answer', async () => {
    const { service, dispatcher, runs, intentId, event } = setup();
    service.states.set(intentId, 'succeeded');
    // The intent moves on (the capture failed) right after the superseded delivery's GET answered.
    service.afterGet = () => void service.states.set(intentId, 'errored_capture');
    const late = await dispatcher.dispatch(event('payment_intent.requires_capture'), { receivedAt });
    expect(late.outcome).toBe('superseded');
    // succeeded was not run on the first answer: its own retrieve found errored_capture (left to its webhook).
    expect(runs).toEqual([]);
    expect(service.gets).toBe(2);
  });

  it('a superseded delivery whose intent is now in a state that may recur dispatches nothing: that state is left to its webhook, as reconciliation leaves it', async () => {
    const { service, dispatcher, runs, intentId, event } = setup({
      handlers: [
        { id: 'Shop.review', patterns: ['payment_intent.requires_review'], current: true },
        { id: 'Shop.capture', patterns: ['payment_intent.requires_capture'], current: true },
      ],
    });
    service.states.set(intentId, 'requires_capture');
    const late = await dispatcher.dispatch(event('payment_intent.requires_review'), { receivedAt });
    expect(late.outcome).toBe('superseded');
    expect(runs).toEqual([]);
    // Its own webhook runs it, once, on the intent it retrieves.
    expect(await dispatcher.dispatch(event('payment_intent.requires_capture'), { receivedAt })).toMatchObject({
      outcome: 'handled',
    });
    expect(runs).toEqual([
      {
        handler: 'Shop.capture',
        event: 'payment_intent.requires_capture',
        source: 'webhook',
        state: 'requires_capture',
      },
    ]);
  });

  it('with reconciliation on, the states it counts as terminal are those a superseded delivery dispatches', async () => {
    const { service, dispatcher, runs, intentId, event } = setup({
      webhooks: { reconcile: { terminalStates: { payment_intent: ['succeeded', 'cancelled', 'errored_capture'] } } },
      watchList: new MemoryIntentWatchStore({ now: runtime }),
    });
    service.states.set(intentId, 'errored_capture');
    expect((await dispatcher.dispatch(event('payment_intent.requires_capture'), { receivedAt })).outcome).toBe(
      'superseded',
    );
    expect(runs).toEqual([
      {
        handler: 'Shop.failed',
        event: 'payment_intent.errored_capture',
        source: 'reconciliation',
        state: 'errored_capture',
      },
    ]);
  });

  it('succeeded, then a real errored_capture (the intent is in errored_capture): its handler runs with ctx.intent', async () => {
    const { service, dispatcher, runs, intentId, event } = setup();
    service.states.set(intentId, 'succeeded');
    await dispatcher.dispatch(event('payment_intent.succeeded'), { receivedAt });
    service.states.set(intentId, 'errored_capture');
    const real = await dispatcher.dispatch(event('payment_intent.errored_capture'), { receivedAt });
    expect(real.outcome).toBe('handled');
    expect(runs.map((r) => [r.handler, r.state])).toEqual([
      ['Shop.paid', 'succeeded'],
      ['Shop.failed', 'errored_capture'],
    ]);
  });

  it('concurrent deliveries of one intent, to several opted-in handlers: exactly one GET', async () => {
    const { service, dispatcher, runs, intentId, event } = setup({
      handlers: [
        { id: 'A.paid', patterns: ['payment_intent.succeeded'], current: true },
        { id: 'B.paid', patterns: ['payment_intent.succeeded'], current: true },
      ],
    });
    service.states.set(intentId, 'succeeded');
    service.hold();
    const first = event('payment_intent.succeeded');
    const deliveries = [
      dispatcher.dispatch(first, { receivedAt }),
      dispatcher.dispatch(first, { receivedAt }),
      dispatcher.dispatch(event('payment_intent.succeeded'), { receivedAt }),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    service.release();
    const outcomes = (await Promise.all(deliveries)).map((r) => r.outcome);
    expect(service.gets).toBe(1);
    expect(outcomes[0]).toBe('handled');
    expect(outcomes.slice(1)).toEqual(['busy', 'busy']);
    expect(runs.map((r) => r.handler).sort()).toEqual(['A.paid', 'B.paid']);
  });

  it("retrieves wait for their turn in reconciliation's rate, at most 5 s: past it the delivery answers retrieve_failed (503), never held longer", async () => {
    const { service, dispatcher, runs, event } = setup({
      webhooks: { reconcile: { maxRetrievesPerSecond: 1 } },
      watchList: new MemoryIntentWatchStore({ now: runtime }),
    });
    // Eight intents paid at once; one GET a second: turns at 0, 1, ... 5 s are taken, the rest are not.
    const ids = Array.from({ length: 8 }, () => randomUUID());
    for (const id of ids) service.states.set(id, 'succeeded');
    const answers = await Promise.all(
      ids.map((id) => dispatcher.dispatch(event('payment_intent.succeeded', id), { receivedAt })),
    );
    expect(answers.map((a) => a.outcome)).toEqual([
      ...Array.from({ length: 6 }, () => 'handled'),
      'retrieve_failed',
      'retrieve_failed',
    ]);
    expect(service.gets).toBe(6);
    expect(runs).toHaveLength(6);
  });

  it('a retrieve that fails (network) answers retrieve_failed (503) and never runs the handler; the redelivery runs it', async () => {
    const { service, dispatcher, runs, intentId, event } = setup();
    service.states.set(intentId, 'succeeded');
    service.failWith = new PaymentsConnectionError('GET', '/payment_intents/x', 'ECONNRESET');
    const paid = event('payment_intent.succeeded');
    const failed = await dispatcher.dispatch(paid, { receivedAt });
    expect(failed.outcome).toBe('retrieve_failed');
    expect(runs).toEqual([]);
    service.failWith = undefined;
    expect(await dispatcher.dispatch(paid, { receivedAt })).toMatchObject({ outcome: 'handled' });
    expect(runs).toHaveLength(1);
  });

  it('a retrieve answered 403 answers retrieve_failed (503), logged with the key hint; nothing runs', async () => {
    const logger = new CapturingLogger();
    Logger.overrideLogger(logger);
    const { service, dispatcher, runs, event } = setup();
    service.failWith = new PaymentsPermissionError({ method: 'GET', path: '/payment_intents/x' });
    expect(await dispatcher.dispatch(event('payment_intent.succeeded'), { receivedAt })).toMatchObject({
      outcome: 'retrieve_failed',
    });
    expect(runs).toEqual([]);
    expect(logger.messages('error').join('\n')).toMatch(/answered 403 to a retrieve .*check the API key's rights/);
  });

  it('a retrieve answered 404 is answered gone (200), logged, the intent no longer watched, nothing run', async () => {
    const watchList = new MemoryIntentWatchStore({ now: runtime });
    const { dispatcher, runs, intentId, event } = setup({ webhooks: { reconcile: {} }, watchList });
    await watchList.watch({ kind: 'payment_intent', id: intentId, createdAt: 0, nextCheckAt: 0, checks: 0 });
    const gone = await dispatcher.dispatch(event('payment_intent.succeeded'), { receivedAt });
    expect(gone.outcome).toBe('gone');
    expect(runs).toEqual([]);
    expect(await watchList.due(10_000_000, 10)).toEqual([]);
  });

  it('a handler that did not opt in runs as today: no GET, no ctx.intent', async () => {
    const { service, dispatcher, runs, event } = setup({
      handlers: [{ id: 'Shop.paid', patterns: ['payment_intent.succeeded'] }],
    });
    expect(await dispatcher.dispatch(event('payment_intent.succeeded'), { receivedAt })).toMatchObject({
      outcome: 'handled',
    });
    expect(service.gets).toBe(0);
    expect(runs).toEqual([
      { handler: 'Shop.paid', event: 'payment_intent.succeeded', source: 'webhook', state: undefined },
    ]);
  });

  it('webhooks.currentState opts every intent handler in; current: false opts one out; an event naming no intent runs as today', async () => {
    const { service, dispatcher, runs, intentId, event } = setup({
      webhooks: { reconcile: false, currentState: true },
      handlers: [
        { id: 'Shop.paid', patterns: ['payment_intent.succeeded'] },
        { id: 'Audit.paid', patterns: ['payment_intent.succeeded'], current: false },
        { id: 'Shop.charge', patterns: ['charge.succeeded'] },
      ],
    });
    service.states.set(intentId, 'requires_capture');
    const late = await dispatcher.dispatch(event('payment_intent.succeeded'), { receivedAt });
    expect(late.handlers).toEqual(
      expect.arrayContaining([
        { handler: 'Shop.paid', status: 'superseded' },
        expect.objectContaining({ handler: 'Audit.paid', status: 'done' }),
      ]),
    );
    expect(late.outcome).toBe('superseded');
    expect(await dispatcher.dispatch(createPaymentEvent('charge.succeeded'), { receivedAt })).toMatchObject({
      outcome: 'handled',
    });
    expect(service.gets).toBe(1);
    expect(runs.map((r) => r.handler)).toEqual(['Audit.paid', 'Shop.charge']);
  });

  it('while a handler of one state of an intent runs, a delivery of another state of that intent answers busy (409)', async () => {
    let finish: () => void = () => undefined;
    const { service, dispatcher, runs, intentId, event } = setup({
      handlers: [
        {
          id: 'Shop.capture',
          patterns: ['payment_intent.requires_capture'],
          current: true,
          invoke: () => new Promise<void>((resolve) => (finish = resolve)),
        },
        { id: 'Shop.paid', patterns: ['payment_intent.succeeded'], current: true },
      ],
    });
    service.states.set(intentId, 'requires_capture');
    const capturing = dispatcher.dispatch(event('payment_intent.requires_capture'), { receivedAt });
    while (runs.length === 0) await new Promise((resolve) => setImmediate(resolve));
    service.states.set(intentId, 'succeeded');
    const paid = event('payment_intent.succeeded');
    expect(await dispatcher.dispatch(paid, { receivedAt })).toMatchObject({ outcome: 'busy' });
    finish();
    expect(await capturing).toMatchObject({ outcome: 'handled' });
    expect(await dispatcher.dispatch(paid, { receivedAt })).toMatchObject({ outcome: 'handled' });
    expect(runs.map((r) => r.handler)).toEqual(['Shop.capture', 'Shop.paid']);
  });

  it('a reconciliation dispatch gives opted-in handlers the retrieved intent without a second GET', async () => {
    const { service, dispatcher, runs, intentId } = setup();
    const reconciled = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: intentId, state: 'succeeded' } },
    } as never);
    expect(await dispatcher.dispatch(reconciled, { receivedAt, source: 'reconciliation' })).toMatchObject({
      outcome: 'handled',
    });
    expect(service.gets).toBe(0);
    expect(runs).toEqual([
      { handler: 'Shop.paid', event: 'payment_intent.succeeded', source: 'reconciliation', state: 'succeeded' },
    ]);
  });

  it('a current that is not a boolean is refused where the decorator is written, naming the option', () => {
    expect(() => OnPaymentEvent('payment_intent.succeeded', { current: 'yes' as unknown as boolean })).toThrow(
      /current.*must be a boolean/,
    );
  });

  it('webhooks.currentState that is not a boolean fails the boot, naming the option and the fix', () => {
    expect(() => validatePaymentsOptions(fixtureOptions({ currentState: 1 as unknown as boolean }))).toThrow(
      /`webhooks.currentState`: must be a boolean, got number\. Fix: pass true/,
    );
  });
});
