import 'reflect-metadata';
import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { MemoryIdempotencyStore, type IdempotencyStore, type PaymentEvent } from '../../../../lib/index.js';
import { type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { PaymentEventsRegistry } from '../../../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { whileRenewingLease } from '../../../../lib/webhooks/dispatch/idempotency-lease.renewal.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { PaymentsTelemetry } from '../../../../lib/telemetry/payments.telemetry.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { deferred } from '../../../fixtures/webhooks/deferred.js';
import { API_KEY, fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';
import { ScriptedRenewStore } from '../../../fixtures/webhooks/scripted-renew.store.js';

const runtime: PaymentsRuntime = { now: () => 1_000, sleep: async () => undefined, random: () => 0.5 };
const noIntents = {
  paymentIntents: { retrieve: async () => ({ id: 'x', state: 'succeeded' }) },
  setupIntents: { retrieve: async () => ({ id: 'y', state: 'succeeded' }) },
};
const TTL_SECONDS = 3;
const receivedAt = new Date('2026-01-01T00:00:00Z');

describe('lease renewal while a handler runs (dispatcher)', () => {
  const logger = new CapturingLogger();
  beforeAll(() => Logger.overrideLogger(logger));
  let registry: PaymentEventsRegistry;
  let telemetry: PaymentsTelemetry;
  let event: PaymentEvent;

  const dispatcherOver = (store: IdempotencyStore): PaymentEventsDispatcher => {
    const options = validatePaymentsOptions(fixtureOptions({ claimTtlSeconds: TTL_SECONDS }));
    return new PaymentEventsDispatcher(
      registry,
      store,
      options.webhooks as Exclude<typeof options.webhooks, false>,
      runtime,
      noIntents,
      telemetry,
    );
  };

  beforeEach(() => {
    logger.clear();
    registry = new PaymentEventsRegistry();
    telemetry = PaymentsTelemetry.disabled();
    event = createPaymentEvent('charge.succeeded');
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('creates no timer for a handler that completes synchronously on the memory store (the fast path stays as it was)', () => {
    const dispatcher = dispatcherOver(new MemoryIdempotencyStore());
    registry.register({ id: 'Sync.run', patterns: ['charge.succeeded'], invoke: () => undefined });
    const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout');
    const result = dispatcher.dispatch(event, { receivedAt });
    expect(result).toEqual({ outcome: 'handled', handlers: [expect.objectContaining({ status: 'done' })] });
    expect(setTimeoutSpy).not.toHaveBeenCalled();
  });

  it('renews every claimTtlSeconds / 3 while an async handler runs, and stops when it ends', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const store = new ScriptedRenewStore();
    const dispatcher = dispatcherOver(store);
    const gate = deferred();
    registry.register({ id: 'Slow.run', patterns: ['charge.succeeded'], invoke: () => gate.promise });
    const dispatched = dispatcher.dispatch(event, { receivedAt });
    await jest.advanceTimersByTimeAsync(999);
    expect(store.renewals).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(store.renewals).toEqual([{ key: `e:${event.id}`, slot: 'Slow.run', leaseMs: TTL_SECONDS * 1000 }]);
    await jest.advanceTimersByTimeAsync(3 * TTL_SECONDS * 1000); // three times the lease
    expect(store.renewals).toHaveLength(1 + 9);
    expect(await store.claim(`e:${event.id}`, { slot: 'Slow.run', eventId: event.id, leaseMs: 1000 })).toEqual({
      status: 'busy',
    });
    gate.resolve();
    expect((await dispatched).outcome).toBe('handled');
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(store.renewals).toHaveLength(10);
    expect(await store.claim(`e:${event.id}`, { slot: 'Slow.run', eventId: event.id, leaseMs: 1000 })).toEqual({
      status: 'done',
    });
  });

  it('stops renewing when the handler rejects, and releases the claim as before', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const store = new ScriptedRenewStore();
    const dispatcher = dispatcherOver(store);
    let fail!: (error: Error) => void;
    const running = new Promise<void>((_resolve, reject) => {
      fail = reject;
    });
    registry.register({ id: 'Failing.run', patterns: ['charge.succeeded'], invoke: () => running });
    const dispatched = dispatcher.dispatch(event, { receivedAt });
    await jest.advanceTimersByTimeAsync(2_500);
    expect(store.renewals).toHaveLength(2);
    fail(new Error('handler failed'));
    expect((await dispatched).outcome).toBe('failed');
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(store.renewals).toHaveLength(2);
    expect(await store.claim(`e:${event.id}`, { slot: 'Failing.run', eventId: event.id, leaseMs: 1000 })).toMatchObject(
      { status: 'claimed', attempt: 2 },
    );
  });

  it('logs a lost lease (event id and handler id, no secret), counts it, and stops renewing', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const store = new ScriptedRenewStore();
    store.answer = 'lost';
    const leaseLost = jest.spyOn(telemetry, 'leaseLost');
    const dispatcher = dispatcherOver(store);
    const gate = deferred();
    registry.register({ id: 'Slow.run', patterns: ['charge.succeeded'], invoke: () => gate.promise });
    const dispatched = dispatcher.dispatch(event, { receivedAt });
    await jest.advanceTimersByTimeAsync(5_000);
    expect(store.renewals).toHaveLength(1);
    const lost = logger.messages('error').filter((line) => line.startsWith('Lost the claim'));
    expect(lost).toEqual([
      expect.stringContaining(
        `Lost the claim of event ${event.id} (charge.succeeded) handler Slow.run while it ran: a redelivery may run it again (check the store, or raise webhooks.claimTtlSeconds)`,
      ),
    ]);
    expect(logger.text()).not.toContain(API_KEY);
    expect(leaseLost).toHaveBeenCalledWith('Slow.run');
    expect(jest.getTimerCount()).toBe(0);
    gate.resolve();
    await dispatched;
  });

  it('logs and counts a failed renewal as a store error, and keeps trying', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const store = new ScriptedRenewStore();
    store.answer = 'error';
    const storeError = jest.spyOn(telemetry, 'storeError');
    const dispatcher = dispatcherOver(store);
    const gate = deferred();
    registry.register({ id: 'Slow.run', patterns: ['charge.succeeded'], invoke: () => gate.promise });
    const dispatched = dispatcher.dispatch(event, { receivedAt });
    await jest.advanceTimersByTimeAsync(2_000);
    expect(store.renewals).toHaveLength(2);
    expect(storeError.mock.calls).toEqual([['renew'], ['renew']]);
    expect(logger.messages('warn')).toContain(
      `Could not renew the claim of event ${event.id} (charge.succeeded) handler Slow.run: Error: store down`,
    );
    store.answer = 'own';
    await jest.advanceTimersByTimeAsync(1_000);
    expect(store.renewals).toHaveLength(3);
    gate.resolve();
    expect((await dispatched).outcome).toBe('handled');
  });

  it('warns at boot when the store has no renew(), naming the fix, and runs handlers as before', async () => {
    const bare: IdempotencyStore = {
      claim: (key, request) => store.claim(key, request),
      complete: (key, completion) => store.complete(key, completion),
      release: (key, release) => store.release(key, release),
    };
    const store = new MemoryIdempotencyStore();
    const dispatcher = dispatcherOver(bare);
    expect(logger.messages('warn')).toEqual([
      expect.stringMatching(
        /has no renew\(\): a handler that runs longer than webhooks\.claimTtlSeconds \(3 s\) may run twice; implement renew\(key, \{ slot, token, leaseMs \}\)/,
      ),
    ]);
    const setTimeoutSpy = jest.spyOn(globalThis, 'setTimeout');
    registry.register({ id: 'Async.run', patterns: ['charge.succeeded'], invoke: async () => undefined });
    expect((await dispatcher.dispatch(event, { receivedAt })).outcome).toBe('handled');
    expect(setTimeoutSpy).not.toHaveBeenCalled();
  });

  it('does not warn for the built-in stores', () => {
    dispatcherOver(new MemoryIdempotencyStore());
    expect(logger.messages('warn')).toEqual([]);
  });
});

describe('whileRenewingLease', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('unrefs its timer, so a running renewal never keeps the process alive', async () => {
    const timers: Array<ReturnType<typeof setTimeout>> = [];
    const realSetTimeout = globalThis.setTimeout;
    jest.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      const timer = realSetTimeout(fn, ms);
      timers.push(timer);
      return timer;
    }) as typeof setTimeout);
    const store = new MemoryIdempotencyStore();
    const claim = await store.claim('k', { slot: 's', leaseMs: 60_000 });
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const gate = deferred();
    const running = whileRenewingLease(gate.promise, {
      store,
      key: 'k',
      slot: 's',
      token: claim.token,
      leaseMs: 60_000,
      onProblem: () => undefined,
    });
    expect(timers).toHaveLength(1);
    expect(timers[0]!.hasRef()).toBe(false);
    gate.resolve();
    await running;
  });

  it('settles as the handler does, value or error', async () => {
    const store = new MemoryIdempotencyStore();
    const renewal = { store, key: 'k', slot: 's', token: 't', leaseMs: 60_000, onProblem: () => undefined };
    await expect(whileRenewingLease(Promise.resolve(42), renewal)).resolves.toBe(42);
    await expect(whileRenewingLease(Promise.reject(new Error('boom')), renewal)).rejects.toThrow('boom');
  });
});
