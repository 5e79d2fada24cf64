import { describe, expect, it } from '@jest/globals';
import { PaymentEventsRegistry, type PaymentEventPattern } from '../../../../lib/webhooks/index.js';

// The registry keeps the set of known event names between deliveries (handlersFor runs on every
// one); registering a handler must refresh it.
describe('PaymentEventsRegistry known names', () => {
  it('a name subscribed to exactly after a lookup becomes known to the wildcards from then on', () => {
    const registry = new PaymentEventsRegistry();
    registry.register({ id: 'A.family', patterns: ['payment_intent.*'], invoke: () => undefined });
    expect(registry.handlersFor('payment_intent.processing')).toEqual([]);

    registry.register({
      id: 'B.processing',
      patterns: ['payment_intent.processing' as PaymentEventPattern],
      invoke: () => undefined,
    });
    expect(registry.handlersFor('payment_intent.processing').map((h) => h.id)).toEqual(['A.family', 'B.processing']);
  });

  it('repeated lookups of a documented name keep answering the same handlers', () => {
    const registry = new PaymentEventsRegistry();
    registry.register({ id: 'A.paid', patterns: ['payment_intent.succeeded'], invoke: () => undefined });
    registry.register({ id: 'B.all', patterns: ['*'], invoke: () => undefined });
    for (let i = 0; i < 3; i++) {
      expect(registry.handlersFor('payment_intent.succeeded').map((h) => h.id)).toEqual(['A.paid', 'B.all']);
    }
  });
});
