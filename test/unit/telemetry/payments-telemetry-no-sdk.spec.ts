import { describe, expect, it } from '@jest/globals';
import { PaymentsTelemetry } from '../../../lib/telemetry/index.js';

// @opentelemetry/api is installed, but this process registered no SDK (no tracer or meter provider).
describe('PaymentsTelemetry with the API and no SDK', () => {
  it('is enabled, yet a delivery and a client call allocate no telemetry of their own (one shared no-op)', async () => {
    const telemetry = await PaymentsTelemetry.load();
    expect(telemetry.enabled).toBe(true);
    expect(telemetry.startDelivery()).toBe(telemetry.startDelivery());
    const server = { address: 'api.example', port: 443 };
    expect(telemetry.startClientCall('GET', '/payment_intents', server)).toBe(
      telemetry.startClientCall('GET', '/payment_intents', server),
    );
  });

  it('runs a handler as a plain call: the very promise the handler returned, no span, no async frame', async () => {
    const telemetry = await PaymentsTelemetry.load();
    const event = { id: '3f0c8a9e-58b6-4d7e-9a51-2f5f3c1b7d10', event: 'payment_intent.succeeded' };
    const handled = Promise.resolve({ status: 'done' });
    expect(telemetry.runHandler('H.m', event, () => handled)).toBe(handled);
    await handled;
  });

  it('still runs what it wraps and hands back its result', async () => {
    const telemetry = await PaymentsTelemetry.load();
    const event = { id: '3f0c8a9e-58b6-4d7e-9a51-2f5f3c1b7d10', event: 'payment_intent.succeeded' };
    const result = { status: 'done', attempt: 1, durationMs: 2 };
    await expect(telemetry.runHandler('H.m', event, async () => result)).resolves.toBe(result);
    await expect(
      telemetry.enqueue('q', event, async (traceparent) => (traceparent === undefined ? 'enqueued' : 'duplicate')),
    ).resolves.toBe('enqueued');
  });
});
