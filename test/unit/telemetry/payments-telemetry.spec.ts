import { describe, expect, it, jest } from '@jest/globals';

// As in an app that did not install the optional peer: importing it fails.
jest.unstable_mockModule('@opentelemetry/api', () => {
  throw Object.assign(new Error("Cannot find package '@opentelemetry/api'"), { code: 'ERR_MODULE_NOT_FOUND' });
});
const { PaymentsTelemetry, routeTemplate } = await import('../../../lib/telemetry/index.js');

describe('PaymentsTelemetry without @opentelemetry/api', () => {
  it('loads as a disabled telemetry instead of failing the boot', async () => {
    const telemetry = await PaymentsTelemetry.load();
    expect(telemetry.enabled).toBe(false);
  });

  it('runs every wrapped operation unchanged and records nothing', async () => {
    const telemetry = await PaymentsTelemetry.load();
    const event = { id: '3f0c8a9e-58b6-4d7e-9a51-2f5f3c1b7d10', event: 'payment_intent.succeeded' };
    const delivery = telemetry.startDelivery();
    delivery.verified(event);
    await expect(delivery.run(async () => 'answered')).resolves.toBe('answered');
    delivery.end('handled', 200);
    delivery.rejected(401, 'invalid_signature');
    const result = { status: 'done', attempt: 1, durationMs: 3 };
    await expect(telemetry.runHandler('H.m', event, async () => result)).resolves.toBe(result);
    await expect(telemetry.runHandler('H.m', event, async () => Promise.reject(new TypeError('boom')))).rejects.toThrow(
      'boom',
    );
    const seen: Array<string | undefined> = [];
    await expect(
      telemetry.enqueue('q', event, async (traceparent) => (seen.push(traceparent), 'enqueued' as const)),
    ).resolves.toBe('enqueued');
    expect(seen).toEqual([undefined]);
    await expect(
      telemetry.processJob('q', event, 1, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', async () => ({
        outcome: 'handled',
      })),
    ).resolves.toEqual({ outcome: 'handled' });
    const call = telemetry.startClientCall('GET', '/payment_intents/x', { address: 'api.example', port: 443 });
    await expect(call.attempt(async () => ({ kind: 'answer' as const, status: 200 }))).resolves.toEqual({
      kind: 'answer',
      status: 200,
    });
    call.retry(10, '429');
    call.end({ status: 200 });
    telemetry.storeError('claim');
    const stop = telemetry.observeFailedJobs('q', async () => 1);
    stop();
  });
});

describe('a Nest app without @opentelemetry/api', () => {
  it('boots and answers a delivery; its telemetry is the disabled one', async () => {
    await import('reflect-metadata');
    const { PaymentsModule } = await import('../../../lib/index.js');
    const { createPaymentEvent } = await import('../../../lib/testing/index.js');
    const { CapturingLogger } = await import('../../fixtures/webhooks/capturing.logger.js');
    const { fixtureOptions, post, sign, startWebhookApp } =
      await import('../../fixtures/webhooks/webhook-app.fixture.js');
    const main = await startWebhookApp({
      adapter: 'express',
      logger: new CapturingLogger(),
      payments: PaymentsModule.forRoot(fixtureOptions({ requireHttps: false })),
    });
    try {
      expect(main.app.get(PaymentsTelemetry).enabled).toBe(false);
      const answer = await post(
        `${main.baseUrl}/payments/webhooks`,
        sign(createPaymentEvent('payment_intent.succeeded')),
      );
      expect(answer).toEqual({ status: 200, body: { received: true, outcome: 'unhandled' } });
    } finally {
      await main.close();
    }
  });
});

describe('routeTemplate', () => {
  it.each([
    ['/payment_intents/3f0c8a9e-58b6-4d7e-9a51-2f5f3c1b7d10', '/payment_intents/{id}'],
    ['/setup_intents/3F0C8A9E-58B6-4D7E-9A51-2F5F3C1B7D10', '/setup_intents/{id}'],
    ['/webhook_requests/3f0c8a9e-58b6-4d7e-9a51-2f5f3c1b7d10/resend', '/webhook_requests/{id}/resend'],
    ['/webhook_requests/42/attempts?limit=20', '/webhook_requests/{id}/attempts'],
    ['/payment_intents', '/payment_intents'],
  ])('%s -> %s', (path, template) => {
    expect(routeTemplate(path)).toBe(template);
  });
});
