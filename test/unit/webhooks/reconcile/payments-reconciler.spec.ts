import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  MemoryIdempotencyStore,
  PaymentsApiError,
  PaymentsPermissionError,
  PaymentsRateLimitError,
  type PaymentEvent,
  type PaymentEventContext,
  type PaymentIntent,
} from '../../../../lib/index.js';
import { type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { PaymentEventsRegistry } from '../../../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { PaymentsReconciler, type ReconcileClient } from '../../../../lib/webhooks/reconcile/payments-reconciler.js';
import { nextCheckDelayMs } from '../../../../lib/webhooks/reconcile/payments-reconcile.validator.js';
import { MemoryIntentWatchStore } from '../../../../lib/webhooks/stores/memory-intent-watch.store.js';
import type { PaymentReconcileRecord } from '../../../../lib/webhooks/contracts/payment-delivery-listener.interface.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';
import { dispatchPluginsOf } from '../../../../lib/webhooks/payments-webhooks.plugins.js';

/*
 * The reconciler (issue 24): intents whose terminal webhook never came are retrieved on a cadence and
 * their terminal state's handlers run once, claimed per (intent, state) exactly as that state's webhook
 * is, so whichever path comes first runs and the other is a duplicate.
 */
const MINUTE = 60_000;

/** A clock the test moves; sleeping moves it too (the retrieve rate limit costs no real time). */
class Clock implements PaymentsRuntime {
  constructor(public ms = Date.parse('2026-11-24T12:00:00Z')) {}
  now = () => this.ms;
  sleep = async (ms: number) => {
    this.ms += ms;
  };
  random = () => 0.5;
}

/** The service's intents, as retrieves see them; an answer can be scripted per id. */
class FakeService implements ReconcileClient {
  readonly states = new Map<string, string>();
  readonly failures = new Map<string, Error>();
  retrieves = 0;
  readonly paymentIntents = { retrieve: (id: string) => this.retrieve(id) };
  readonly setupIntents = { retrieve: (id: string) => this.retrieve(id) };

  private async retrieve(id: string): Promise<PaymentIntent> {
    this.retrieves++;
    const failure = this.failures.get(id);
    if (failure) throw failure;
    const state = this.states.get(id);
    if (state === undefined)
      throw new PaymentsApiError({ status: 404, method: 'GET', path: `/payment_intents/${id}`, body: {} });
    return { id, state, amount: 1999 } as unknown as PaymentIntent;
  }
}

describe('PaymentsReconciler', () => {
  const logger = new CapturingLogger();
  beforeAll(() => Logger.overrideLogger(logger));

  let clock: Clock;
  let service: FakeService;
  let watchList: MemoryIntentWatchStore;
  let store: MemoryIdempotencyStore;
  let registry: PaymentEventsRegistry;
  let dispatcher: PaymentEventsDispatcher;
  let runs: Array<{ handler: string; intent: string; source: PaymentEventContext['source'] }>;
  let records: PaymentReconcileRecord[];
  let failNext = 0;

  const reconcilerOn = (runtime: PaymentsRuntime = clock, extra: Record<string, unknown> = {}) => {
    const options = validatePaymentsOptions(
      fixtureOptions({
        reconcile: { afterSeconds: 60, maxAgeSeconds: 3 * 24 * 3600, maxRetrievesPerSecond: 10, ...extra },
        deliveryListener: { onReconcile: (record: PaymentReconcileRecord) => records.push(record) },
      }),
    );
    const webhooks = options.webhooks as Exclude<typeof options.webhooks, false>;
    // The receiver's plug-ins' hooks, as Nest gives them to the dispatcher and the reconciler.
    const plugins = dispatchPluginsOf(webhooks, { watchList });
    dispatcher = new PaymentEventsDispatcher(registry, store, webhooks, runtime, service, undefined, plugins);
    return new PaymentsReconciler(webhooks, watchList, dispatcher, service, runtime, undefined, plugins);
  };

  const webhookOf = (intentId: string, state = 'succeeded'): PaymentEvent =>
    createPaymentEvent(
      `payment_intent.${state}` as 'payment_intent.succeeded',
      {
        data: { payment_intent: { id: intentId, state } },
      } as never,
    );

  beforeEach(() => {
    clock = new Clock();
    service = new FakeService();
    watchList = new MemoryIntentWatchStore({ now: () => clock.ms });
    store = new MemoryIdempotencyStore({ now: () => clock.ms });
    registry = new PaymentEventsRegistry();
    runs = [];
    records = [];
    failNext = 0;
    for (const id of ['Orders.paid', 'Emails.receipt']) {
      registry.register({
        id,
        patterns: ['payment_intent.succeeded'],
        invoke: (event, ctx) => {
          if (failNext > 0) {
            failNext--;
            throw new Error('database down');
          }
          const intent = (event.data as { payment_intent: { id: string } }).payment_intent;
          runs.push({ handler: id, intent: intent.id, source: ctx.source });
        },
      });
    }
  });

  it('runs the succeeded handlers once, with ctx.source reconciliation, for a payment whose webhook never came', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    service.states.set(id, 'succeeded');

    expect(await reconciler.sweep()).toMatchObject({ swept: true, checked: 0 }); // not due before afterSeconds
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ checked: 1, reconciled: 1 });
    expect(runs).toEqual([
      { handler: 'Orders.paid', intent: id, source: 'reconciliation' },
      { handler: 'Emails.receipt', intent: id, source: 'reconciliation' },
    ]);
    expect(watchList.list()).toEqual([]);
    expect(records).toEqual([expect.objectContaining({ intentId: id, state: 'succeeded', outcome: 'reconciled' })]);
  });

  it('a setup intent whose webhook never came: the setup_intent.succeeded handlers run once', async () => {
    const saved: string[] = [];
    registry.register({
      id: 'Wallet.saved',
      patterns: ['setup_intent.succeeded'],
      invoke: (event, ctx) => {
        saved.push(`${(event.data as { setup_intent: { id: string } }).setup_intent.id}:${ctx.source}`);
      },
    });
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('setup_intent', id);
    service.states.set(id, 'succeeded');
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ reconciled: 1 });
    expect(await reconciler.sweep()).toMatchObject({ checked: 0 });
    expect(saved).toEqual([`${id}:reconciliation`]);
    expect(runs).toEqual([]); // the payment handlers are bound to another event
  });

  it('the webhook that comes after the reconciler acted is a duplicate: nothing runs again', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    service.states.set(id, 'succeeded');
    clock.ms += MINUTE;
    await reconciler.sweep();

    const late = await dispatcher.dispatch(webhookOf(id), { receivedAt: new Date(clock.ms) });
    expect(late.outcome).toBe('duplicate');
    expect(runs).toHaveLength(2);
  });

  it('a webhook that came first settles the intent: the reconciler runs nothing and stops watching it', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    expect((await dispatcher.dispatch(webhookOf(id), { receivedAt: new Date(clock.ms) })).outcome).toBe('handled');
    expect(runs.map((run) => run.source)).toEqual(['webhook', 'webhook']);
    await Promise.resolve();
    expect(watchList.list()).toEqual([]); // forgotten by the webhook's dispatch: no retrieve needed
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ checked: 0 });
    expect(service.retrieves).toBe(0);
  });

  it('never synthesises a requires_* state: the intent is checked again on the cadence until it is terminal', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    service.states.set(id, 'requires_payment_method');
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ checked: 1, pending: 1, reconciled: 0 });
    expect(runs).toEqual([]);
    expect(watchList.list()).toEqual([expect.objectContaining({ id, checks: 1, nextCheckAt: clock.ms + MINUTE })]);
    service.states.set(id, 'succeeded');
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ reconciled: 1 });
  });

  it('checks on a cadence that backs off with age: every minute, then 5, 15, and hourly', () => {
    const cadence = validatePaymentsOptions(fixtureOptions({ reconcile: {} })).webhooks;
    const steps = (cadence as { reconcile: { cadence: Parameters<typeof nextCheckDelayMs>[1] } }).reconcile.cadence;
    expect([1, 20, 90, 25 * 60].map((minutes) => nextCheckDelayMs(minutes * MINUTE, steps) / MINUTE)).toEqual([
      1, 5, 15, 60,
    ]);
  });

  it('a 429 during a sweep stops it (one retrieve at a time); that intent backs off on its cadence, the others stay due for the next sweep', async () => {
    const reconciler = reconcilerOn(clock, { maxConcurrentRetrieves: 1 });
    const [a, b] = [randomUUID(), randomUUID()];
    await reconciler.watch('payment_intent', a);
    await reconciler.watch('payment_intent', b);
    service.states.set(a, 'succeeded').set(b, 'succeeded');
    service.failures.set(
      a,
      new PaymentsRateLimitError({
        status: 429,
        method: 'GET',
        path: '/payment_intents/x',
        body: {},
        attempts: 3,
      } as never),
    );
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ checked: 1, reconciled: 0, stopped: 'rate_limited' });
    expect(watchList.list()).toHaveLength(2);
    service.failures.clear();
    expect(await reconciler.sweep()).toMatchObject({ checked: 1, reconciled: 1 });
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ checked: 1, reconciled: 1 });
    expect(watchList.list()).toEqual([]);
  });

  it('an intent whose retrieve never answers backs off on its own: the intents behind it are checked in the same sweep', async () => {
    const reconciler = reconcilerOn();
    const [stuck, paid, other] = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of [stuck, paid, other]) await reconciler.watch('payment_intent', id);
    service.states.set(paid, 'succeeded').set(other, 'requires_payment_method');
    service.failures.set(
      stuck,
      Object.assign(new Error('timeout of 10000ms exceeded'), { name: 'PaymentsConnectionError' }),
    );
    clock.ms += MINUTE;
    for (let sweep = 0; sweep < 3; sweep++) {
      await reconciler.sweep();
      clock.ms += MINUTE;
    }
    expect(runs.filter((run) => run.intent === paid)).toHaveLength(2); // both handlers, once each
    expect(
      watchList
        .list()
        .map((intent) => intent.id)
        .sort(),
    ).toEqual([other, stuck].sort());
    // Past maxAgeSeconds the stuck intent is given up like any other, its state unknown.
    clock.ms += 3 * 24 * 3600 * 1000;
    await reconciler.sweep();
    expect(watchList.list()).toEqual([]);
    expect(records).toContainEqual(expect.objectContaining({ intentId: stuck, outcome: 'gave_up' }));
  });

  it('three unanswered retrieves in a row stop the sweep (one at a time: the service is down); each is rescheduled on its own', async () => {
    const reconciler = reconcilerOn(clock, { maxConcurrentRetrieves: 1 });
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      await reconciler.watch('payment_intent', id);
      service.failures.set(id, new Error('ECONNREFUSED'));
    }
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ checked: 3, pending: 3, stopped: 'unavailable' });
    service.failures.clear();
    ids.forEach((id) => service.states.set(id, 'succeeded'));
    // The fourth, never tried, is first in the next sweep; the three tried come back a minute later.
    expect(await reconciler.sweep()).toMatchObject({ checked: 1, reconciled: 1 });
  });

  it('an intent the service no longer knows (404) is no longer watched, and reported gone', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ gone: 1 });
    expect(watchList.list()).toEqual([]);
    expect(records).toEqual([expect.objectContaining({ intentId: id, outcome: 'gone' })]);
  });

  it('a 403 backs that intent off with an error line naming the status; nothing is forgotten', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    service.failures.set(
      id,
      new PaymentsPermissionError({ status: 403, method: 'GET', path: `/payment_intents/${id}`, body: {} } as never),
    );
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ checked: 1, pending: 1 });
    expect(watchList.list()).toHaveLength(1);
    expect(logger.lines.some((line) => line.level === 'error' && line.message.includes('answered 403'))).toBe(true);
  });

  it('gives up after maxAgeSeconds: no longer watched, logged for a person, reported to the listener', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    service.states.set(id, 'requires_review');
    clock.ms += 3 * 24 * 3600 * 1000;
    expect(await reconciler.sweep()).toMatchObject({ gaveUp: 1 });
    expect(watchList.list()).toEqual([]);
    expect(records).toEqual([expect.objectContaining({ intentId: id, state: 'requires_review', outcome: 'gave_up' })]);
    expect(
      logger.lines.some((line) => line.level === 'warn' && line.message.includes(`gave up on payment_intent ${id}`)),
    ).toBe(true);
  });

  it('a handler that fails during reconciliation is retried on the next check, never dropped; the other runs once', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    service.states.set(id, 'succeeded');
    failNext = 1;
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ pending: 1, reconciled: 0 });
    expect(watchList.list()).toHaveLength(1);
    clock.ms += MINUTE;
    expect(await reconciler.sweep()).toMatchObject({ reconciled: 1 });
    expect(runs.map((run) => run.handler).sort()).toEqual(['Emails.receipt', 'Orders.paid']);
  });

  it('never gives up an intent whose terminal state still has a handler to run, even past maxAgeSeconds and failing retrieves', async () => {
    const reconciler = reconcilerOn();
    const id = randomUUID();
    await reconciler.watch('payment_intent', id);
    service.states.set(id, 'succeeded');
    failNext = 1;
    clock.ms += 3 * 24 * 3600 * 1000; // past maxAgeSeconds: found terminal, a handler fails
    expect(await reconciler.sweep()).toMatchObject({ pending: 1, gaveUp: 0 });
    service.failures.set(id, new PaymentsApiError({ status: 502, method: 'GET', path: '/x', body: {} }));
    for (let i = 0; i < 4; i++) {
      clock.ms += 2 * 3600 * 1000;
      expect(await reconciler.sweep()).toMatchObject({ pending: 1, gaveUp: 0 });
    }
    service.failures.clear();
    clock.ms += 2 * 3600 * 1000;
    expect(await reconciler.sweep()).toMatchObject({ reconciled: 1 });
    expect(runs.map((run) => run.handler).sort()).toEqual(['Emails.receipt', 'Orders.paid']);
    expect(watchList.list()).toEqual([]);
  });

  it('two sweepers racing on one watch list, their clocks 10 minutes apart: one holds the lease, handlers run once', async () => {
    const first = reconcilerOn(clock);
    const skewed = new Clock(clock.ms + 10 * MINUTE);
    const second = reconcilerOn(skewed);
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      await first.watch('payment_intent', id);
      service.states.set(id, 'succeeded');
    }
    clock.ms += MINUTE;
    skewed.ms += MINUTE;
    const [a, b] = await Promise.all([first.sweep(), second.sweep()]);
    expect([a.swept, b.swept].sort()).toEqual([false, true]);
    expect(a.reconciled + b.reconciled).toBe(3);
    expect(runs).toHaveLength(ids.length * 2);
    expect(new Set(runs.map((run) => `${run.handler}:${run.intent}`)).size).toBe(ids.length * 2);
  });
});
