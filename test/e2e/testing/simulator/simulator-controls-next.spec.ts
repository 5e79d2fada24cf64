import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { PaymentsConfigurationError } from '../../../../lib/index.js';
import { PaymentsSimulator } from '../../../../lib/testing/index.js';
import { WebhookReceiver } from './webhook-receiver.fixture.js';

// The count forms of two controls (what the CLI's `drop <n>` and `delay <ms> [n]` use), and an endpoint
// registered with a fixed secret (an app configured before the simulator starts).
describe('PaymentsSimulator: controls for the next n deliveries, and a fixed endpoint secret', () => {
  const SECRET = `whsec_${Buffer.from('a-fixed-endpoint-secret-32-bytes').toString('base64')}`;
  let sim: PaymentsSimulator;
  let receiver: WebhookReceiver;
  let url: string;

  beforeEach(async () => {
    sim = new PaymentsSimulator({ apiKeys: ['sk_test_next'], retrySchedule: [] });
    await sim.start();
    receiver = new WebhookReceiver();
    url = await receiver.start();
  });
  afterEach(async () => {
    await sim.stop();
    await receiver.stop();
  });

  it('dropDeliveries({ next: 2 }) drops exactly the next two deliveries, then none', async () => {
    sim.registerWebhookEndpoint({ url });
    sim.controls.dropDeliveries({ next: 2 });
    for (let i = 0; i < 4; i += 1) sim.emit('payment_intent.cancelled');
    await sim.waitForIdle();
    expect(sim.controls.dropped).toBe(2);
    const sent = sim
      .events()
      .slice(2)
      .map((e) => e.id);
    expect(receiver.deliveries.map((d) => d.body.id)).toEqual(sent);
  });

  it('delayDeliveries(ms, { next: 1 }) delays the next delivery only', async () => {
    sim.registerWebhookEndpoint({ url });
    sim.controls.delayDeliveries(60_000, { next: 1 });
    sim.emit('payment_intent.cancelled');
    sim.emit('payment_intent.cancelled');
    await receiver.waitFor(1);
    expect(receiver.deliveries.map((d) => d.body.id)).toEqual([sim.events()[1]!.id]);
    expect(sim.webhookRequests()[0]).toMatchObject({ status: 'scheduled', attempt_count: 0 });
  });

  it('the count forms refuse a negative or fractional count', () => {
    expect(() => sim.controls.dropDeliveries({ next: -1 })).toThrow(/next/);
    expect(() => sim.controls.delayDeliveries(10, { next: 1.5 })).toThrow(/next/);
  });

  it('registerWebhookEndpoint({ secret }) signs with that secret; a malformed one is refused unquoted', async () => {
    const endpoint = sim.registerWebhookEndpoint({ url, secret: SECRET });
    expect(endpoint.secret).toBe(SECRET);
    sim.emit('payment_intent.succeeded');
    await sim.waitForIdle();
    const [delivery] = receiver.deliveries;
    const verdict = await sim
      .verifierFor(SECRET)
      .verify({ rawBody: Buffer.from(delivery!.rawBody), headers: delivery!.headers as Record<string, string> });
    expect(verdict).toMatchObject({ valid: true });
    let error: unknown;
    try {
      sim.registerWebhookEndpoint({ url, secret: 'whsec_%%%not-base64' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PaymentsConfigurationError);
    expect(String((error as Error).message)).not.toContain('%%%not-base64');
  });
});
