import 'reflect-metadata';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { MemoryIdempotencyStore, type PaymentEvent } from '../../../../lib/index.js';
import { createPaymentEvent, type PaymentsRuntime } from '../../../../lib/testing/index.js';
import { PaymentEventsRegistry } from '../../../../lib/webhooks/index.js';
import { PaymentEventsDispatcher } from '../../../../lib/webhooks/dispatch/payment-events.dispatcher.js';
import { validatePaymentsOptions } from '../../../../lib/payments-options.validator.js';
import { CapturingLogger } from '../../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../../fixtures/webhooks/webhook-app.fixture.js';

const runtime: PaymentsRuntime = { now: () => 1_000, sleep: async () => undefined, random: () => 0.5 };
const intents = {
  paymentIntents: { retrieve: async () => ({ id: 'x', state: 'succeeded' }) },
  setupIntents: { retrieve: async () => ({ id: 'y', state: 'succeeded' }) },
};

type Release = { reconcile?: Record<string, unknown> };

/**
 * Two releases of one app over one store, as in a rolling deploy: each with its own options, the same
 * handler. Whatever the old release did, the new one must see it as done.
 */
function releases(store: MemoryIdempotencyStore) {
  const runs: string[] = [];
  const release = ({ reconcile }: Release) => {
    const registry = new PaymentEventsRegistry();
    registry.register({
      id: 'Fulfil.run',
      patterns: ['payment_intent.*', 'setup_intent.*'],
      invoke: (event: PaymentEvent) => void runs.push(event.id),
    });
    const options = validatePaymentsOptions(fixtureOptions(reconcile ? { reconcile } : {}));
    return new PaymentEventsDispatcher(
      registry,
      store,
      options.webhooks as Exclude<typeof options.webhooks, false>,
      runtime,
      intents,
    );
  };
  return { release, runs };
}

const receivedAt = new Date('2026-01-01T00:00:00Z');
const reconciled = (event: PaymentEvent) => ({ ...event, id: 'f0000000-0000-5000-8000-000000000000' });

describe('claims that survive a change of configuration between releases', () => {
  beforeAll(() => Logger.overrideLogger(new CapturingLogger()));

  it.each([
    ['reconciliation off, then on', {}, { reconcile: {} }],
    ['reconciliation on, then off', { reconcile: {} }, {}],
    [
      'cancelled terminal, then not',
      { reconcile: {} },
      { reconcile: { terminalStates: { payment_intent: ['succeeded'] } } },
    ],
    [
      'cancelled not terminal, then terminal',
      { reconcile: { terminalStates: { payment_intent: ['succeeded'] } } },
      { reconcile: {} },
    ],
  ])('a webhook handled by the old release (%s) is a duplicate in the new one', (_, before, after) => {
    const { release, runs } = releases(new MemoryIdempotencyStore({ now: runtime }));
    const event = createPaymentEvent('payment_intent.cancelled');
    expect(release(before).dispatch(event, { receivedAt })).toMatchObject({ outcome: 'handled' });
    expect(release(after).dispatch(event, { receivedAt })).toMatchObject({ outcome: 'duplicate' });
    expect(runs).toEqual([event.id]);
  });

  it('a state the reconciler settled under the old release is a duplicate when its webhook reaches the new one, terminal or not', () => {
    const { release, runs } = releases(new MemoryIdempotencyStore({ now: runtime }));
    const event = createPaymentEvent('payment_intent.cancelled');
    const old = release({ reconcile: {} });
    expect(old.dispatch(reconciled(event), { receivedAt, source: 'reconciliation' })).toMatchObject({
      outcome: 'handled',
    });
    const next = release({ reconcile: { terminalStates: { payment_intent: ['succeeded'] } } });
    expect(next.dispatch(event, { receivedAt })).toMatchObject({ outcome: 'duplicate' });
    expect(release({}).dispatch(event, { receivedAt })).toMatchObject({ outcome: 'duplicate' });
    expect(runs).toHaveLength(1);
  });

  it('a webhook of a terminal state handled with reconciliation off is settled for the reconciler of a later release', () => {
    const { release, runs } = releases(new MemoryIdempotencyStore({ now: runtime }));
    const event = createPaymentEvent('payment_intent.succeeded');
    expect(release({}).dispatch(event, { receivedAt })).toMatchObject({ outcome: 'handled' });
    expect(
      release({ reconcile: {} }).dispatch(reconciled(event), { receivedAt, source: 'reconciliation' }),
    ).toMatchObject({
      outcome: 'duplicate',
    });
    expect(runs).toEqual([event.id]);
  });

  it('a state a webhook ran while it was not terminal is a duplicate for the reconciler of a release that made it terminal', () => {
    const { release, runs } = releases(new MemoryIdempotencyStore({ now: runtime }));
    const event = createPaymentEvent('payment_intent.errored_sale');
    expect(release({ reconcile: {} }).dispatch(event, { receivedAt })).toMatchObject({ outcome: 'handled' });
    const next = release({
      reconcile: { terminalStates: { payment_intent: ['succeeded', 'cancelled', 'errored_sale'] } },
    });
    expect(next.dispatch(reconciled(event), { receivedAt, source: 'reconciliation' })).toMatchObject({
      outcome: 'duplicate',
    });
    expect(next.dispatch(event, { receivedAt })).toMatchObject({ outcome: 'duplicate' });
    expect(runs).toEqual([event.id]);
  });

  it('a state that may recur (not terminal) runs for each of its events', () => {
    const { release, runs } = releases(new MemoryIdempotencyStore({ now: runtime }));
    const intent = { id: 'a1b2c3d4-0000-4000-8000-000000000001' };
    const first = createPaymentEvent('payment_intent.requires_payment_method', { data: { payment_intent: intent } });
    const second = createPaymentEvent('payment_intent.requires_payment_method', { data: { payment_intent: intent } });
    const dispatcher = release({ reconcile: {} });
    expect(dispatcher.dispatch(first, { receivedAt })).toMatchObject({ outcome: 'handled' });
    expect(dispatcher.dispatch(second, { receivedAt })).toMatchObject({ outcome: 'handled' });
    expect(dispatcher.dispatch(first, { receivedAt })).toMatchObject({ outcome: 'duplicate' });
    expect(runs).toEqual([first.id, second.id]);
  });

  it('an intent id in another letter case claims the same occurrence (one run)', () => {
    const { release, runs } = releases(new MemoryIdempotencyStore({ now: runtime }));
    const id = 'abcdef01-2345-4678-89ab-cdef01234567';
    const upper = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: id.toUpperCase() } },
    });
    const dispatcher = release({ reconcile: {} });
    expect(dispatcher.dispatch(upper, { receivedAt })).toMatchObject({ outcome: 'handled' });
    const lower = createPaymentEvent('payment_intent.succeeded', { data: { payment_intent: { id } } });
    expect(dispatcher.dispatch(reconciled(lower), { receivedAt, source: 'reconciliation' })).toMatchObject({
      outcome: 'duplicate',
    });
    expect(runs).toEqual([upper.id]);
  });

  it("an intent id that is not a UUID (a NUL byte, a long string) keys nothing: the event's own record", () => {
    const store = new MemoryIdempotencyStore({ now: runtime });
    const keys: string[] = [];
    const claim = store.claim.bind(store);
    store.claim = (key, request) => {
      keys.push(`${key} ${request.slot}`);
      return claim(key, request);
    };
    const { release } = releases(store);
    const dispatcher = release({ reconcile: {} });
    for (const id of ['abc\u0000def', 'x'.repeat(10_000), 42]) {
      const event = createPaymentEvent('payment_intent.succeeded', { data: { payment_intent: { id } as never } });
      expect(dispatcher.dispatch(event, { receivedAt })).toMatchObject({ outcome: 'handled' });
      expect(keys.pop()).toBe(`e:${event.id} Fulfil.run`);
      expect(keys).toEqual([]);
    }
  });
});
