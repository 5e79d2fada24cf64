import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PaymentsInvalidArgumentError } from '../../../../lib/index.js';
import { PaymentsSimulator } from '../../../../lib/testing/index.js';
import { WebhookReceiver } from './webhook-receiver.fixture.js';

/*
 * The two scenarios of current-state handling, scripted in process: an intent that succeeded, then a
 * late `requires_capture` event of it (stale: the intent stays succeeded), and an intent that
 * succeeded, then a real `errored_capture` (the intent moves).
 */
describe('PaymentsSimulator.emit: late events and real transitions of an existing intent', () => {
  let sim: PaymentsSimulator;
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    sim = new PaymentsSimulator({ apiKeys: ['sk_test_late'], retrySchedule: [] });
    await sim.start();
    receiver = new WebhookReceiver();
    sim.registerWebhookEndpoint({ url: await receiver.start() });
  });
  afterEach(async () => {
    await sim.stop();
    await receiver.stop();
  });

  const paidIntent = async (): Promise<string> => {
    const paid = sim.emit('payment_intent.succeeded');
    await sim.waitForIdle();
    return paid.data.payment_intent!.id;
  };

  it("emit(type, id, { late: true }): delivered after, data in the state it names, the intent's own state unchanged", async () => {
    const intentId = await paidIntent();
    const late = sim.emit('payment_intent.requires_capture', intentId, { late: true });
    await sim.waitForIdle();
    expect(late.data.payment_intent).toMatchObject({ id: intentId, state: 'requires_capture' });
    expect(receiver.deliveries.map((d) => d.body.event)).toEqual([
      'payment_intent.succeeded',
      'payment_intent.requires_capture',
    ]);
    expect(receiver.deliveries[1]!.body).toMatchObject({
      id: late.id,
      data: { payment_intent: { id: intentId, state: 'requires_capture' } },
    });
    expect(sim.intent(intentId)!.state).toBe('succeeded');
  });

  it('a late charge.requires_capture shows the intent requiring capture, and leaves it succeeded', async () => {
    const intentId = await paidIntent();
    const late = sim.emit('charge.requires_capture', intentId, { late: true });
    expect(late.data.payment_intent).toMatchObject({ id: intentId, state: 'requires_capture' });
    expect(sim.intent(intentId)!.state).toBe('succeeded');
  });

  it('emit(type, id) without late: the intent really moves (succeeded, then errored_capture)', async () => {
    const intentId = await paidIntent();
    const errored = sim.emit('payment_intent.errored_capture', intentId);
    await sim.waitForIdle();
    expect(errored.data.payment_intent).toMatchObject({ id: intentId, state: 'errored_capture' });
    expect(sim.intent(intentId)!.state).toBe('errored_capture');
    expect(receiver.deliveries.map((d) => d.body.event)).toEqual([
      'payment_intent.succeeded',
      'payment_intent.errored_capture',
    ]);
  });

  it('late needs the intent it is late for', () => {
    expect(() => sim.emit('payment_intent.requires_capture', undefined, { late: true })).toThrow(
      PaymentsInvalidArgumentError,
    );
    expect(() => sim.emit('payment_intent.requires_capture', undefined, { late: true })).toThrow(/intentId/);
    expect(sim.events()).toEqual([]);
  });
});
