import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isUuid, lowerCaseUuid, uuidV5 } from '../../../lib/core/payments.uuid.js';
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

describe('isUuid and lowerCaseUuid: the char-code loop agrees with the regular expression it replaced', () => {
  const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const near = fc
    .tuple(fc.uuid(), fc.nat(35), fc.constantFrom('-', 'g', 'G', 'F', 'f', '0', '9', '/', ':', '@', '`', '\u0000', ''))
    .map(([uuid, at, char]) => {
      const mixed = at % 2 === 0 ? uuid.toUpperCase() : uuid;
      return mixed.slice(0, at) + char + mixed.slice(at + 1);
    });

  it('accepts exactly what the regular expression accepts (UUIDs, their one-character edits, anything)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uuid(), near, fc.string(), fc.string({ minLength: 36, maxLength: 36 })), (value) => {
        expect(isUuid(value)).toBe(UUID_RE.test(value));
      }),
      { numRuns: 3000, seed: 20261126 },
    );
    for (const value of [undefined, null, 36, {}, ['abcdef01-2345-4678-89ab-cdef01234567']]) {
      expect(isUuid(value)).toBe(false);
    }
  });

  it('lower-cases an id in any letter case, and gives a lower-case id back as it is', () => {
    const id = 'abcdef01-2345-4678-89ab-cdef01234567';
    expect(lowerCaseUuid(id)).toBe(id);
    expect(lowerCaseUuid(id.toUpperCase())).toBe(id);
    expect(lowerCaseUuid('ABCDEF01-2345-4678-89ab-cdef01234567')).toBe(id);
  });
});
