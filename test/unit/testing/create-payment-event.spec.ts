import { describe, expect, it } from '@jest/globals';
import { createPaymentEvent } from '../../../lib/testing/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('createPaymentEvent', () => {
  it('[W13] builds the WebhookEventPayload shape: UUID id and webhook_id, event, data object, metadata null', () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    expect(event.id).toMatch(UUID);
    expect(event.webhook_id).toMatch(UUID);
    expect(event.event).toBe('payment_intent.succeeded');
    expect(typeof event.data).toBe('object');
    expect(event.metadata).toBeNull();
  });

  it('draws a new event id each call', () => {
    expect(createPaymentEvent('payment_intent.succeeded').id).not.toBe(
      createPaymentEvent('payment_intent.succeeded').id,
    );
  });

  it('puts a payment_intent whose state is the event suffix in data', () => {
    const event = createPaymentEvent('payment_intent.errored_capture');
    expect(event.data.payment_intent).toEqual({
      id: expect.stringMatching(UUID),
      state: 'errored_capture',
      amount: 1000,
    });
  });

  it('puts a setup_intent whose state is the event suffix in data', () => {
    const event = createPaymentEvent('setup_intent.cancelled');
    expect(event.data).toEqual({ setup_intent: { id: expect.stringMatching(UUID), state: 'cancelled' } });
  });

  it('gives charge events an automatic_async payment_intent in the matching state', () => {
    expect(createPaymentEvent('charge.requires_capture').data.payment_intent).toMatchObject({
      state: 'requires_capture',
      capture_method: 'automatic_async',
    });
    expect(createPaymentEvent('charge.succeeded').data.payment_intent).toMatchObject({
      state: 'succeeded',
      capture_method: 'automatic_async',
    });
  });

  it('applies top-level overrides', () => {
    const event = createPaymentEvent('payment_intent.cancelled', {
      id: 'evt-fixed',
      webhook_id: 'wh-fixed',
      metadata: { order: '42' },
    });
    expect(event).toMatchObject({ id: 'evt-fixed', webhook_id: 'wh-fixed', metadata: { order: '42' } });
  });

  it('merges intent overrides into the default intent', () => {
    const event = createPaymentEvent('payment_intent.succeeded', {
      data: { payment_intent: { id: 'pi-1', amount: 250 } },
    });
    expect(event.data.payment_intent).toEqual({ id: 'pi-1', state: 'succeeded', amount: 250 });
  });

  it('adds extra data fields beside the intent', () => {
    const event = createPaymentEvent('setup_intent.succeeded', { data: { payment_method: { id: 'pm_1' } } });
    expect(event.data).toMatchObject({ setup_intent: { state: 'succeeded' }, payment_method: { id: 'pm_1' } });
  });
});
