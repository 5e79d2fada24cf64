import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  MemoryIdempotencyStore,
  type IdempotencyClaim,
  type IdempotencyStore,
  type PaymentEvent,
  type PaymentEventContext,
  type PaymentEventType,
} from '../../../../lib/index.js';
import { PaymentEventsRegistry, type RunClaimRequest } from '../../../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { handledStatesOf } from '../../../../lib/webhooks/dispatch/payment-event.context.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { createPaymentEvent, type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

const noIntents = {
  paymentIntents: { retrieve: async () => ({ id: 'x', state: 'succeeded' }) },
  setupIntents: { retrieve: async () => ({ id: 'y', state: 'succeeded' }) },
};

describe('ctx.handled: what the intent record knows, without a retrieve', () => {
  beforeAll(() => Logger.overrideLogger(new CapturingLogger()));
  let clock: number;
  let registry: PaymentEventsRegistry;
  let dispatcherOf: (store: IdempotencyStore) => PaymentEventsDispatcher;
  let dispatcher: PaymentEventsDispatcher;
  const seen: Record<string, PaymentEventContext['handled'][]> = {};
  const receivedAt = new Date('2026-01-01T00:00:00Z');
  const intent = '5d0c1f7e-8a54-4b1f-9d3a-2b8e6c7f9a10';
  const eventOf = (type: PaymentEventType): PaymentEvent =>
    createPaymentEvent(type, { data: { payment_intent: { id: intent } } }) as PaymentEvent;

  const handler = (id: string, patterns: Parameters<PaymentEventsRegistry['register']>[0]['patterns']) =>
    registry.register({
      id,
      patterns,
      invoke: (_event, ctx) => {
        (seen[id] ??= []).push(ctx.handled);
      },
    });

  beforeEach(() => {
    clock = Date.parse('2026-01-01T00:00:00Z');
    for (const key of Object.keys(seen)) delete seen[key];
    registry = new PaymentEventsRegistry();
    const runtime: PaymentsRuntime = { now: () => clock, sleep: async () => undefined, random: () => 0.5 };
    const options = validatePaymentsOptions(fixtureOptions());
    dispatcherOf = (store) =>
      new PaymentEventsDispatcher(
        registry,
        store,
        options.webhooks as Exclude<typeof options.webhooks, false>,
        runtime,
        noIntents,
      );
    dispatcher = dispatcherOf(new MemoryIdempotencyStore({ now: () => clock }));
  });

  it('is empty, and frozen, for the first state of an intent', async () => {
    handler('Orders.paid', ['payment_intent.succeeded']);
    await dispatcher.dispatch(eventOf('payment_intent.succeeded'), { receivedAt });
    expect(seen['Orders.paid']).toEqual([[]]);
    expect(Object.isFrozen(seen['Orders.paid']![0])).toBe(true);
  });

  it('lists each (state, handler) already handled with when, for a late event of the same intent', async () => {
    handler('Orders.paid', ['payment_intent.succeeded']);
    handler('Mail.receipt', ['payment_intent.succeeded']);
    handler('Orders.authorised', ['payment_intent.requires_capture']);
    await dispatcher.dispatch(eventOf('payment_intent.succeeded'), { receivedAt });
    const handledAt = clock;
    clock += 5_000;
    await dispatcher.dispatch(eventOf('payment_intent.requires_capture'), { receivedAt });
    expect(seen['Orders.authorised']).toEqual([
      [
        { state: 'succeeded', handler: 'Mail.receipt', at: new Date(handledAt) },
        { state: 'succeeded', handler: 'Orders.paid', at: new Date(handledAt) },
      ],
    ]);
  });

  it('lets a handler that does not opt in guard itself in one line', async () => {
    const shipped: string[] = [];
    registry.register({
      id: 'Orders.authorised',
      patterns: ['payment_intent.requires_capture'],
      invoke: (_event, ctx) => {
        if (ctx.handled?.some((h) => h.state === 'succeeded')) return;
        shipped.push('held for capture');
      },
    });
    handler('Orders.paid', ['payment_intent.succeeded']);
    await dispatcher.dispatch(eventOf('payment_intent.succeeded'), { receivedAt });
    const late = await dispatcher.dispatch(eventOf('payment_intent.requires_capture'), { receivedAt });
    expect(late.outcome).toBe('handled');
    expect(shipped).toEqual([]);
  });

  it("tells this handler's own earlier run of a state that recurs apart from other handlers'", async () => {
    handler('Orders.authorised', ['payment_intent.requires_capture']);
    await dispatcher.dispatch(eventOf('payment_intent.requires_capture'), { receivedAt });
    clock += 1_000;
    await dispatcher.dispatch(eventOf('payment_intent.requires_capture'), { receivedAt });
    expect(seen['Orders.authorised']).toEqual([
      [],
      [{ state: 'requires_capture', handler: 'Orders.authorised', at: new Date(clock - 1_000) }],
    ]);
  });

  it("is empty for an event that names no intent (the event's own record)", async () => {
    handler('Charges.seen', ['charge.succeeded']);
    await dispatcher.dispatch(createPaymentEvent('charge.succeeded', { data: { payment_intent: { id: intent } } }), {
      receivedAt,
    });
    expect(seen['Charges.seen']).toEqual([[]]);
  });

  it('keeps the records of two intents apart', async () => {
    handler('Orders.paid', ['payment_intent.succeeded']);
    await dispatcher.dispatch(eventOf('payment_intent.succeeded'), { receivedAt });
    await dispatcher.dispatch(
      createPaymentEvent('payment_intent.succeeded', { data: { payment_intent: { id: randomUUID() } } }),
      { receivedAt },
    );
    expect(seen['Orders.paid']).toEqual([[], []]);
  });

  it('is undefined with a custom store whose claim does not report handled', async () => {
    const inner = new MemoryIdempotencyStore();
    const store: IdempotencyStore = {
      claim: (key: string, request: RunClaimRequest): IdempotencyClaim => {
        const claim = inner.claim(key, request) as IdempotencyClaim;
        return claim.status === 'claimed' ? { status: 'claimed', token: claim.token, attempt: claim.attempt } : claim;
      },
      complete: (key, completion) => inner.complete(key, completion),
      release: (key, release) => inner.release(key, release),
    };
    handler('Orders.paid', ['payment_intent.succeeded']);
    await dispatcherOf(store).dispatch(eventOf('payment_intent.succeeded'), { receivedAt });
    expect(seen['Orders.paid']).toEqual([undefined]);
  });
});

describe('handledStatesOf', () => {
  it('sorts by state then handler, turns times into Dates, and leaves out a handler the store did not name', () => {
    expect(
      handledStatesOf([
        { state: 'succeeded', handler: 'B.b', at: 3 },
        { state: 'requires_capture', at: 1 },
        { state: 'succeeded', handler: 'A.a', at: 2 },
      ]),
    ).toEqual([
      { state: 'requires_capture', at: new Date(1) },
      { state: 'succeeded', handler: 'A.a', at: new Date(2) },
      { state: 'succeeded', handler: 'B.b', at: new Date(3) },
    ]);
    expect(handledStatesOf([{ state: 'succeeded', at: 1 }])![0]).not.toHaveProperty('handler');
    expect(handledStatesOf(undefined)).toBeUndefined();
  });
});
