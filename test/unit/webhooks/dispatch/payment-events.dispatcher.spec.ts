import 'reflect-metadata';
import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  MemoryIdempotencyStore,
  type IdempotencyClaim,
  type IdempotencyStore,
  type PaymentEvent,
  type PaymentEventContext,
} from '../../../../lib/index.js';
import type { RunClaimRequest, RunCompletion, RunRelease } from '../../../../lib/webhooks/index.js';
import { type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { PaymentEventsRegistry } from '../../../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

type Invoke = (event: PaymentEvent, ctx: PaymentEventContext) => unknown;

/** A store wrapper whose individual methods can be made to fail. */
class FlakyStore implements IdempotencyStore {
  readonly inner = new MemoryIdempotencyStore();
  failClaimFor = new Set<string>();
  failComplete = false;
  failRelease = false;
  leases: number[] = [];
  retentions: number[] = [];

  async claim(key: string, request: RunClaimRequest): Promise<IdempotencyClaim> {
    this.leases.push(request.leaseMs);
    if ([...this.failClaimFor].some((suffix) => request.slot.endsWith(suffix))) throw new Error('store down');
    return this.inner.claim(key, request);
  }
  async complete(key: string, completion: RunCompletion): Promise<void> {
    this.retentions.push(completion.retentionMs);
    if (this.failComplete) throw new Error('store down');
    return this.inner.complete(key, completion);
  }
  async release(key: string, release: RunRelease): Promise<void> {
    if (this.failRelease) throw new Error('store down');
    return this.inner.release(key, release);
  }
}

/** The record and slot a handler's run of `event` is kept under (an intent's state: the intent's record). */
const recordOf = (event: PaymentEvent, handlerId: string) => {
  const intent = (event.data as { payment_intent?: { id?: string } }).payment_intent?.id;
  const state = event.event.slice(event.event.indexOf('.') + 1);
  return event.event.startsWith('payment_intent.') && intent
    ? { key: `i:${intent}`, slot: `${state}|${handlerId}` }
    : { key: `e:${event.id}`, slot: handlerId };
};
/** A claim on `store` of `handlerId`'s run of `event`, as the dispatcher makes it. */
const claimOf = (store: IdempotencyStore, event: PaymentEvent, handlerId: string, leaseMs = 60_000) => {
  const { key, slot } = recordOf(event, handlerId);
  return store.claim(key, { slot, eventId: event.id, leaseMs });
};

const runtime: PaymentsRuntime = { now: () => 1_000, sleep: async () => undefined, random: () => 0.5 };
const noIntents = {
  paymentIntents: { retrieve: async () => ({ id: 'x', state: 'succeeded' }) },
  setupIntents: { retrieve: async () => ({ id: 'y', state: 'succeeded' }) },
};

describe('PaymentEventsDispatcher', () => {
  beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
  let registry: PaymentEventsRegistry;
  let store: FlakyStore;
  let dispatcher: PaymentEventsDispatcher;
  const receivedAt = new Date('2026-01-01T00:00:00Z');

  const handler = (
    id: string,
    invoke: Invoke,
    patterns: Parameters<PaymentEventsRegistry['register']>[0]['patterns'] = ['payment_intent.succeeded'],
  ) => registry.register({ id, patterns, invoke });

  beforeEach(() => {
    registry = new PaymentEventsRegistry();
    store = new FlakyStore();
    const options = validatePaymentsOptions(fixtureOptions({ claimTtlSeconds: 42, retentionSeconds: 7 }));
    dispatcher = new PaymentEventsDispatcher(
      registry,
      store,
      options.webhooks as Exclude<typeof options.webhooks, false>,
      runtime,
      noIntents,
    );
  });

  it("claims each handler's run once, in the intent's record, with claimTtlSeconds, and completes it with retentionSeconds", async () => {
    handler('A.run', () => undefined);
    const event = createPaymentEvent('payment_intent.succeeded');
    expect(await dispatcher.dispatch(event, { receivedAt })).toEqual({
      outcome: 'handled',
      handlers: [{ handler: 'A.run', status: 'done', durationMs: 0, attempt: 1 }],
    });
    // One record per intent: one claim and one completion per run, whatever the options.
    expect(store.leases).toEqual([42_000]);
    expect(store.retentions).toEqual([7_000]);
    expect(await claimOf(store.inner, event, 'A.run', 1)).toEqual({ status: 'done' });
    const intent = event.data.payment_intent!.id;
    expect(await store.inner.claim(`i:${intent}`, { slot: 'succeeded|A.run', leaseMs: 1 })).toEqual({ status: 'done' });
  });

  it("claims an event that names no intent in the event's own record", async () => {
    handler('A.run', () => undefined, ['charge.succeeded']);
    const event = createPaymentEvent('charge.succeeded');
    expect((await dispatcher.dispatch(event, { receivedAt })).outcome).toBe('handled');
    expect(store.leases).toEqual([42_000]);
    expect(store.retentions).toEqual([7_000]);
    expect(await store.inner.claim(`e:${event.id}`, { slot: 'A.run', eventId: event.id, leaseMs: 1 })).toEqual({
      status: 'done',
    });
  });

  it('isolates handlers: one throwing does not stop the others, and the outcome is failed', async () => {
    const ran: string[] = [];
    handler('A.fails', () => {
      throw new Error('boom');
    });
    handler('B.works', () => {
      ran.push('B');
    });
    const result = await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt });
    expect(result.outcome).toBe('failed');
    expect(result.handlers).toEqual([
      { handler: 'A.fails', status: 'failed', durationMs: 0, attempt: 1, error: expect.any(Error) },
      { handler: 'B.works', status: 'done', durationMs: 0, attempt: 1 },
    ]);
    expect(ran).toEqual(['B']);
  });

  it('releases the claim of a failed handler so that the next dispatch runs it, with attempt 2', async () => {
    const attempts: number[] = [];
    handler('A.flaky', (_event, ctx) => {
      attempts.push(ctx.deliveryAttempt);
      if (attempts.length === 1) throw new Error('first time fails');
    });
    const event = createPaymentEvent('payment_intent.succeeded');
    await dispatcher.dispatch(event, { receivedAt });
    expect((await dispatcher.dispatch(event, { receivedAt })).outcome).toBe('handled');
    expect(attempts).toEqual([1, 2]);
  });

  it('reports deliveryAttempt as the higher of the claim count and the queue attempt', async () => {
    const attempts: number[] = [];
    handler('A.run', (_event, ctx) => {
      attempts.push(ctx.deliveryAttempt);
    });
    await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt, deliveryAttempt: 4 });
    expect(attempts).toEqual([4]);
  });

  it('passes receivedAt to the handler context', async () => {
    let seen: Date | undefined;
    handler('A.run', (_event, ctx) => {
      seen = ctx.receivedAt;
    });
    await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt });
    expect(seen).toBe(receivedAt);
  });

  it('runs nothing whose claim the store could not grant, and says store_unavailable', async () => {
    const ran: string[] = [];
    handler('A.run', () => ran.push('A'));
    store.failClaimFor.add('|A.run');
    const result = await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt });
    expect(result).toEqual({
      outcome: 'store_unavailable',
      handlers: [{ handler: 'A.run', status: 'store_unavailable', error: expect.any(Error) }],
    });
    expect(ran).toEqual([]);
  });

  it('says store_unavailable when a handler ran but its completion could not be recorded', async () => {
    handler('A.run', () => undefined);
    store.failComplete = true;
    const result = await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt });
    expect(result.outcome).toBe('store_unavailable');
    expect(result.handlers[0]).toMatchObject({ handler: 'A.run', status: 'store_unavailable', durationMs: 0 });
  });

  it('still reports failed when releasing a failed claim fails (the lease then expires)', async () => {
    handler('A.fails', () => {
      throw new Error('boom');
    });
    store.failRelease = true;
    expect((await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt })).outcome).toBe(
      'failed',
    );
  });

  it('prefers store_unavailable over failed over busy when handlers disagree', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    handler('A.busy', () => undefined);
    handler('B.fails', () => {
      throw new Error('boom');
    });
    await claimOf(store.inner, event, 'A.busy');
    expect((await dispatcher.dispatch(event, { receivedAt })).outcome).toBe('failed');
    handler('C.storeDown', () => undefined);
    store.failClaimFor.add('|C.storeDown');
    expect((await dispatcher.dispatch(event, { receivedAt })).outcome).toBe('store_unavailable');
  });

  it('says busy when another delivery holds a claim and nothing failed', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    handler('A.run', () => undefined);
    await claimOf(store.inner, event, 'A.run');
    expect(await dispatcher.dispatch(event, { receivedAt })).toEqual({
      outcome: 'busy',
      handlers: [{ handler: 'A.run', status: 'busy' }],
    });
  });

  it('says duplicate when every handler had completed, handled when some ran now', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    handler('A.run', () => undefined);
    await dispatcher.dispatch(event, { receivedAt });
    expect((await dispatcher.dispatch(event, { receivedAt })).outcome).toBe('duplicate');
    handler('B.new', () => undefined);
    expect(await dispatcher.dispatch(event, { receivedAt })).toEqual({
      outcome: 'handled',
      handlers: [
        { handler: 'A.run', status: 'skipped' },
        { handler: 'B.new', status: 'done', durationMs: 0, attempt: 1 },
      ],
    });
  });

  it('says unhandled, touching no store, when no handler is bound', async () => {
    handler('A.run', () => undefined, ['setup_intent.succeeded']);
    expect(await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt })).toEqual({
      outcome: 'unhandled',
      handlers: [],
    });
    expect(store.leases).toEqual([]);
  });

  it('waits for async handlers before completing their claim', async () => {
    let finished = false;
    handler('A.slow', async () => {
      await Promise.resolve();
      finished = true;
    });
    const result = await dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt });
    expect(finished).toBe(true);
    expect(result.outcome).toBe('handled');
  });
});

describe('PaymentEventsDispatcher over the in-memory store (the receiver fast path)', () => {
  beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
  const receivedAt = new Date('2026-01-01T00:00:00Z');
  let registry: PaymentEventsRegistry;
  let store: MemoryIdempotencyStore;
  let dispatcher: PaymentEventsDispatcher;

  beforeEach(() => {
    registry = new PaymentEventsRegistry();
    store = new MemoryIdempotencyStore({ maxEntries: 2 });
    const options = validatePaymentsOptions(fixtureOptions({}));
    dispatcher = new PaymentEventsDispatcher(
      registry,
      store,
      options.webhooks as Exclude<typeof options.webhooks, false>,
      runtime,
      noIntents,
    );
  });
  const handler = (id: string, invoke: Invoke) =>
    registry.register({ id, patterns: ['payment_intent.succeeded'], invoke });

  it('answers a handler that returns no promise at once, and its redelivery as a duplicate', () => {
    handler('A.run', () => undefined);
    const event = createPaymentEvent('payment_intent.succeeded');
    const first = dispatcher.dispatch(event, { receivedAt });
    expect(first).not.toBeInstanceOf(Promise);
    expect(first).toEqual({
      outcome: 'handled',
      handlers: [{ handler: 'A.run', status: 'done', durationMs: 0, attempt: 1 }],
    });
    expect(dispatcher.dispatch(event, { receivedAt })).toEqual({
      outcome: 'duplicate',
      handlers: [{ handler: 'A.run', status: 'skipped' }],
    });
  });

  it('waits for a handler that returns a promise before completing its claim', async () => {
    let finish!: () => void;
    handler('A.slow', () => new Promise<void>((resolve) => (finish = resolve)));
    const event = createPaymentEvent('payment_intent.succeeded');
    const pending = dispatcher.dispatch(event, { receivedAt });
    expect(pending).toBeInstanceOf(Promise);
    // While it runs, a copy finds the claim held.
    expect(dispatcher.dispatch(event, { receivedAt })).toEqual({
      outcome: 'busy',
      handlers: [{ handler: 'A.slow', status: 'busy' }],
    });
    finish();
    expect((await pending).outcome).toBe('handled');
    expect(await claimOf(store, event, 'A.slow', 1)).toEqual({ status: 'done' });
  });

  it('releases the claim of a handler that throws at once, so the next dispatch runs it with attempt 2', () => {
    const attempts: number[] = [];
    handler('A.flaky', (_event, ctx) => {
      attempts.push(ctx.deliveryAttempt);
      if (attempts.length === 1) throw new Error('first time fails');
    });
    const event = createPaymentEvent('payment_intent.succeeded');
    expect(dispatcher.dispatch(event, { receivedAt })).toMatchObject({ outcome: 'failed' });
    expect(dispatcher.dispatch(event, { receivedAt })).toMatchObject({ outcome: 'handled' });
    expect(attempts).toEqual([1, 2]);
  });

  it('answers store_unavailable, running nothing, when the store is full of running handlers', async () => {
    await store.claim('e:other-1', { slot: 'H.x', eventId: 'other-1', leaseMs: 60_000 });
    await store.claim('e:other-2', { slot: 'H.x', eventId: 'other-2', leaseMs: 60_000 });
    let runs = 0;
    handler('A.run', () => {
      runs++;
    });
    const result = dispatcher.dispatch(createPaymentEvent('payment_intent.succeeded'), { receivedAt });
    expect(result).toMatchObject({
      outcome: 'store_unavailable',
      handlers: [{ handler: 'A.run', status: 'store_unavailable' }],
    });
    expect(runs).toBe(0);
  });

  it('goes through the promise methods when they were replaced (a subclass or a spy sees every call)', async () => {
    const claims: string[] = [];
    const claim = store.claim.bind(store);
    store.claim = (key, request) => {
      claims.push(`${key} ${request.slot}`);
      return claim(key, request);
    };
    handler('A.run', () => undefined);
    const event = createPaymentEvent('payment_intent.succeeded');
    expect((await dispatcher.dispatch(event, { receivedAt })).outcome).toBe('handled');
    expect(claims).toEqual([`i:${event.data.payment_intent!.id} succeeded|A.run`]);
  });
});
