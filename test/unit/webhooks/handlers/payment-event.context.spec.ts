import { describe, expect, it } from '@jest/globals';
import { PaymentEventIntentMissingError, type PaymentEvent } from '../../../../lib/index.js';
import { retrieveIntentOf } from '../../../../lib/webhooks/dispatch/payment-event.context.js';
import { createPaymentEvent } from '../../../../lib/testing/index.js';

function fakeClient() {
  const calls: string[] = [];
  return {
    calls,
    paymentIntents: { retrieve: async (id: string) => (calls.push(`payment:${id}`), { id, state: 'succeeded' }) },
    setupIntents: { retrieve: async (id: string) => (calls.push(`setup:${id}`), { id, state: 'succeeded' }) },
  };
}

const withData = (type: PaymentEvent['event'], data: Record<string, unknown>): PaymentEvent =>
  ({ ...createPaymentEvent(type), data }) as PaymentEvent;

describe('ctx.retrieveIntent()', () => {
  const id = '0e9f4a58-2c4b-4d8e-9a0e-3c7b2f1d5e6a';

  it('[W12] GETs the payment intent of a payment_intent.* event', async () => {
    const client = fakeClient();
    await retrieveIntentOf(withData('payment_intent.succeeded', { payment_intent: { id } }), client);
    expect(client.calls).toEqual([`payment:${id}`]);
  });

  it('[W12] GETs the setup intent of a setup_intent.* event', async () => {
    const client = fakeClient();
    await retrieveIntentOf(withData('setup_intent.succeeded', { setup_intent: { id } }), client);
    expect(client.calls).toEqual([`setup:${id}`]);
  });

  it('[W14] GETs the payment intent of a charge.* event (its capture state)', async () => {
    const client = fakeClient();
    await retrieveIntentOf(withData('charge.requires_capture', { payment_intent: { id } }), client);
    expect(client.calls).toEqual([`payment:${id}`]);
  });

  it('accepts an intent given as a bare id', async () => {
    const client = fakeClient();
    await retrieveIntentOf(withData('charge.succeeded', { payment_intent: id }), client);
    expect(client.calls).toEqual([`payment:${id}`]);
  });

  it('throws a clear error, sending nothing, when data names no intent', async () => {
    const client = fakeClient();
    const event = withData('payment_intent.succeeded', { something: 'else' });
    await expect(retrieveIntentOf(event, client)).rejects.toThrow(PaymentEventIntentMissingError);
    await expect(retrieveIntentOf(event, client)).rejects.toThrow(
      `Event ${event.id} (payment_intent.succeeded) names no intent: data.payment_intent.id is missing`,
    );
    expect(client.calls).toEqual([]);
  });

  it('does not read a setup intent for a payment event', async () => {
    const client = fakeClient();
    await expect(
      retrieveIntentOf(withData('payment_intent.succeeded', { setup_intent: { id } }), client),
    ).rejects.toThrow(PaymentEventIntentMissingError);
  });
});
