import { describe, expect, it } from '@jest/globals';
import {
  PAYMENT_EVENT_TYPES,
  PaymentEventsRegistry,
  type PaymentEventPattern,
} from '../../../../lib/webhooks/index.js';

const registryWith = (...handlers: Array<[string, PaymentEventPattern[]]>): PaymentEventsRegistry => {
  const registry = new PaymentEventsRegistry();
  for (const [id, patterns] of handlers) registry.register({ id, patterns, invoke: () => undefined });
  return registry;
};

describe('PaymentEventsRegistry', () => {
  it('[W10] lists the handled event types, sorted, with wildcards expanded against the documented names', () => {
    const registry = registryWith(['A.paid', ['payment_intent.succeeded']], ['B.charges', ['charge.*']]);
    expect(registry.handledEventTypes()).toEqual([
      'charge.requires_capture',
      'charge.succeeded',
      'payment_intent.succeeded',
    ]);
  });

  it("[W10] '*' stands for every documented name", () => {
    expect(registryWith(['A.all', ['*']]).handledEventTypes()).toEqual([...PAYMENT_EVENT_TYPES].sort());
  });

  it('[W10] lists nothing when no handler is registered', () => {
    expect(new PaymentEventsRegistry().handledEventTypes()).toEqual([]);
  });

  it('returns the handlers bound to a type, exact names and wildcards, in registration order', () => {
    const registry = registryWith(
      ['A.exact', ['setup_intent.failed']],
      ['B.family', ['setup_intent.*']],
      ['C.other', ['charge.*']],
      ['D.all', ['*']],
    );
    expect(registry.handlersFor('setup_intent.failed').map((h) => h.id)).toEqual(['A.exact', 'B.family', 'D.all']);
    expect(registry.handlersFor('setup_intent.cancelled').map((h) => h.id)).toEqual(['B.family', 'D.all']);
  });

  it('[W11] a wildcard does not match an undocumented name', () => {
    const registry = registryWith(['A.family', ['payment_intent.*']], ['B.all', ['*']]);
    expect(registry.handlersFor('payment_intent.invented')).toEqual([]);
  });

  it('a name subscribed to exactly (declaration merging) becomes known, so wildcards match it too', () => {
    const registry = registryWith(
      ['A.processing', ['payment_intent.processing' as PaymentEventPattern]],
      ['B.family', ['payment_intent.*']],
    );
    expect(registry.handlersFor('payment_intent.processing').map((h) => h.id)).toEqual(['A.processing', 'B.family']);
    expect(registry.handledEventTypes()).toContain('payment_intent.processing');
  });

  it('refuses a second handler with the same id', () => {
    const registry = new PaymentEventsRegistry();
    expect(registry.register({ id: 'A.run', patterns: ['charge.succeeded'], invoke: () => undefined })).toBe(true);
    expect(registry.register({ id: 'A.run', patterns: ['setup_intent.failed'], invoke: () => undefined })).toBe(false);
    expect(registry.handlers()).toHaveLength(1);
  });
});
