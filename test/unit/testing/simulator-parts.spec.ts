import { describe, expect, it } from '@jest/globals';
import { formatMinorAmount } from '../../../lib/testing/simulator/checkout-page.html.js';
import { SimulatorCheckoutHandler } from '../../../lib/testing/simulator/simulator-checkout.handler.js';
import { SimulatorEventsEmitter } from '../../../lib/testing/simulator/simulator-events.emitter.js';
import { matchSimulatorRoute, type SimulatorRoute } from '../../../lib/testing/simulator/simulator-routes.js';
import { SimulatorHttpError } from '../../../lib/testing/simulator/simulator-http.util.js';
import { SimulatorState } from '../../../lib/testing/simulator/simulator-state.js';

/** The HTTP status a simulator part threw, or undefined. */
function statusOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof SimulatorHttpError ? error.status : undefined;
  }
  return undefined;
}

const route = (method: 'GET' | 'POST', path: string): SimulatorRoute => ({
  method,
  path,
  api: true,
  handle: () => undefined,
});

describe('simulator route table (matchSimulatorRoute)', () => {
  const routes = [
    route('POST', '/payment_intents'),
    route('GET', '/payment_intents/:id'),
    route('GET', '/webhook_requests/:id/attempts'),
  ];

  it('matches method and segments, and collects :params', () => {
    expect(matchSimulatorRoute(routes, 'GET', ['payment_intents', 'abc'])).toEqual({
      route: routes[1],
      params: { id: 'abc' },
    });
    expect(matchSimulatorRoute(routes, 'GET', ['webhook_requests', 'x', 'attempts'])?.params).toEqual({ id: 'x' });
  });

  it('finds nothing for another method, a missing or an extra segment', () => {
    expect(matchSimulatorRoute(routes, 'DELETE', ['payment_intents', 'abc'])).toBeUndefined();
    expect(matchSimulatorRoute(routes, 'GET', ['payment_intents'])).toBeUndefined();
    expect(matchSimulatorRoute(routes, 'GET', ['payment_intents', 'abc', 'extra'])).toBeUndefined();
  });
});

describe('simulator emission rules (SimulatorEventsEmitter.typesForOutcome)', () => {
  it('adds charge.* to a payment intent with capture_method automatic_async', () => {
    expect(
      SimulatorEventsEmitter.typesForOutcome(
        { kind: 'payment_intent', capture_method: 'automatic_async' },
        'succeeded',
      ),
    ).toEqual(['payment_intent.succeeded', 'charge.succeeded']);
    expect(
      SimulatorEventsEmitter.typesForOutcome(
        { kind: 'payment_intent', capture_method: 'automatic_async' },
        'requires_capture',
      ),
    ).toEqual(['payment_intent.requires_capture', 'charge.requires_capture']);
  });

  it('emits only the intent event otherwise', () => {
    expect(
      SimulatorEventsEmitter.typesForOutcome({ kind: 'payment_intent', capture_method: 'manual' }, 'succeeded'),
    ).toEqual(['payment_intent.succeeded']);
    expect(
      SimulatorEventsEmitter.typesForOutcome({ kind: 'setup_intent', capture_method: undefined }, 'failed'),
    ).toEqual(['setup_intent.failed']);
  });
});

describe('simulator state (SimulatorState)', () => {
  const state = new SimulatorState({ scheme: 'standard-webhooks' }, () => Date.parse('2026-01-01T00:00:00Z'));
  state.addApiKey('sk_a', 'acct_a');
  state.addApiKey('sk_b', 'acct_b');

  it('lets only the owning account reach an intent (403 for another, 404 for an unknown id)', () => {
    const intent = state.createIntent('payment_intent', 'acct_a', 100, 'automatic_async', null);
    expect(state.ownedIntent('payment_intent', intent.id, 'acct_a')).toBe(intent);
    expect(statusOf(() => state.ownedIntent('payment_intent', intent.id, 'acct_b'))).toBe(403);
    expect(() => state.ownedIntent('setup_intent', intent.id, 'acct_a')).toThrow(SimulatorHttpError);
    expect(statusOf(() => state.ownedIntent('payment_intent', 'not-a-uuid', 'acct_a'))).toBe(404);
  });

  it('delivers an event to the account’s endpoints subscribed to it', () => {
    const all = state.createEndpoint('acct_a', 'http://127.0.0.1:1/hooks', undefined);
    state.createEndpoint('acct_a', 'http://127.0.0.1:1/setup', ['setup_intent.succeeded']);
    state.createEndpoint('acct_b', 'http://127.0.0.1:1/other', undefined);
    expect(state.subscribers('acct_a', 'payment_intent.succeeded').map((e) => e.id)).toEqual([all.id]);
    expect(all.secret).toMatch(/^whsec_/);
  });
});

describe('checkout allowed origins (SimulatorCheckoutHandler.parseOrigins)', () => {
  it('defaults to any origin and keeps exact origins', () => {
    expect(SimulatorCheckoutHandler.parseOrigins(undefined)).toEqual(['*']);
    expect(SimulatorCheckoutHandler.parseOrigins(['http://127.0.0.1:3000'])).toEqual(['http://127.0.0.1:3000']);
  });

  it('refuses an origin with a path, and an empty list', () => {
    expect(() => SimulatorCheckoutHandler.parseOrigins(['https://shop.example/checkout'])).toThrow(SimulatorHttpError);
    expect(() => SimulatorCheckoutHandler.parseOrigins([])).toThrow(SimulatorHttpError);
  });
});

describe('checkout form amounts (formatMinorAmount)', () => {
  it('formats the smallest unit with the currency’s own digits', () => {
    expect(formatMinorAmount(1999, 'EUR')).toBe('€19.99');
    expect(formatMinorAmount(1999, 'JPY')).toBe('¥1,999');
    expect(formatMinorAmount(1000, 'KWD').replace(/\s/g, ' ')).toBe('KWD 1.000');
  });

  it('shows the bare amount without a valid currency code', () => {
    expect(formatMinorAmount(1999, undefined)).toBe('1999');
    expect(formatMinorAmount(1999, 'euro')).toBe('1999');
  });
});
