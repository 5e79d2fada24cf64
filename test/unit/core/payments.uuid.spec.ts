import { describe, expect, it } from '@jest/globals';
import { isUuid, uuidV5 } from '../../../lib/core/payments.uuid.js';
import { reconciledEvent } from '../../../lib/webhooks/reconcile/reconcile-sweep.js';

describe('uuidV5 and the ids of reconciled events', () => {
  it("matches RFC 9562's name-based UUID (the DNS namespace example)", () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  it('gives a reconciled event a stable UUID per (kind, intent, state), whatever the letter case of the intent id', () => {
    const id = 'abcdef01-2345-4678-89ab-cdef01234567';
    const a = reconciledEvent('payment_intent', 'succeeded', { id, state: 'succeeded' });
    const b = reconciledEvent('payment_intent', 'succeeded', { id: id.toUpperCase(), state: 'succeeded' });
    expect(isUuid(a.id)).toBe(true);
    expect(a.id[14]).toBe('5');
    expect(b.id).toBe(a.id);
    expect(reconciledEvent('payment_intent', 'cancelled', { id, state: 'cancelled' }).id).not.toBe(a.id);
    expect(reconciledEvent('setup_intent', 'succeeded', { id, state: 'succeeded' }).id).not.toBe(a.id);
  });
});
