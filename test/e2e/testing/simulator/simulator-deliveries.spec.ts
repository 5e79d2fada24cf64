import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { hmacVerifier, standardWebhooksVerifier } from '../../../../lib/index.js';
import { PaymentsSimulator, type PaymentsSimulatorOptions } from '../../../../lib/testing/index.js';
import { apiClient, confirm, WebhookReceiver } from './webhook-receiver.fixture.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('PaymentsSimulator webhook deliveries', () => {
  let sim: PaymentsSimulator;
  let receiver: WebhookReceiver;
  let receiverUrl: string;
  let baseUrl: string;
  let api: ReturnType<typeof apiClient>;

  async function boot(options: PaymentsSimulatorOptions = {}): Promise<void> {
    sim = new PaymentsSimulator({
      apiKeys: ['sk_test'],
      retrySchedule: [5, 10, 20],
      deliveryTimeoutMs: 2_000,
      ...options,
    });
    baseUrl = await sim.start();
    api = apiClient(baseUrl, 'sk_test');
  }
  async function endpoint(events?: string[]): Promise<{ id: string; secret: string }> {
    return (await api('POST', '/webhook_endpoints', { url: receiverUrl, events })).body;
  }
  async function paidIntent(
    outcome = 'succeeded',
    body: Record<string, unknown> = { amount: 900 },
  ): Promise<{ id: string }> {
    const intent = (await api('POST', '/payment_intents', body)).body;
    expect((await confirm(baseUrl, intent.embed_token, outcome)).status).toBe(200);
    return intent;
  }

  beforeEach(async () => {
    receiver = new WebhookReceiver();
    receiverUrl = await receiver.start();
  });
  afterEach(async () => {
    await sim.stop();
    await receiver.stop();
  });

  describe('signed payloads', () => {
    beforeEach(() => boot());

    it('[W13] posts the WebhookEventPayload of the confirm: event id, endpoint id, event, intent snapshot, metadata null', async () => {
      const { id: webhookId } = await endpoint();
      const intent = await paidIntent('succeeded', { amount: 900, capture_method: 'manual' });
      await sim.waitForIdle();
      expect(receiver.deliveries).toHaveLength(1);
      expect(receiver.deliveries[0]!.body).toEqual({
        id: expect.stringMatching(UUID),
        webhook_id: webhookId,
        event: 'payment_intent.succeeded',
        data: {
          payment_intent: expect.objectContaining({
            id: intent.id,
            state: 'succeeded',
            amount: 900,
            capture_method: 'manual',
          }),
        },
        metadata: null,
      });
    });

    it('[W5] signs with the endpoint secret so standardWebhooksVerifier accepts the raw body', async () => {
      const { secret } = await endpoint();
      await paidIntent();
      await sim.waitForIdle();
      const delivery = receiver.deliveries[0]!;
      const verifier = standardWebhooksVerifier({ secrets: secret });
      expect(verifier.verify({ rawBody: Buffer.from(delivery.rawBody), headers: delivery.headers })).toEqual({
        valid: true,
      });
      expect(delivery.headers['webhook-id']).toBe(delivery.body.id);
    });

    it("[W5] a verifier holding another endpoint's secret refuses the delivery", async () => {
      await endpoint();
      const other = await endpoint(['setup_intent.succeeded']);
      await paidIntent();
      await sim.waitForIdle();
      const delivery = receiver.deliveries[0]!;
      expect(
        standardWebhooksVerifier({ secrets: other.secret }).verify({
          rawBody: Buffer.from(delivery.rawBody),
          headers: delivery.headers,
        }),
      ).toEqual({
        valid: false,
        reason: 'signature_mismatch',
      });
    });

    it('delivers only the events an endpoint subscribed to', async () => {
      await endpoint(['payment_intent.cancelled']);
      await paidIntent('succeeded');
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => d.body.event)).toEqual(['payment_intent.cancelled']);
    });

    it('delivers nothing to the endpoints of another account', async () => {
      sim.addApiKey('sk_other');
      await apiClient(baseUrl, 'sk_other')('POST', '/webhook_endpoints', { url: receiverUrl });
      await paidIntent();
      await sim.waitForIdle();
      expect(receiver.deliveries).toHaveLength(0);
    });

    it('[W14] automatic_async: a succeeded confirm also emits charge.succeeded', async () => {
      await endpoint();
      await paidIntent('succeeded', { amount: 10, capture_method: 'automatic_async' });
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => d.body.event).sort()).toEqual([
        'charge.succeeded',
        'payment_intent.succeeded',
      ]);
    });

    it('[W14] automatic_async: a requires_capture confirm also emits charge.requires_capture', async () => {
      await endpoint();
      await paidIntent('requires_capture', { amount: 10, capture_method: 'automatic_async' });
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => d.body.event).sort()).toEqual([
        'charge.requires_capture',
        'payment_intent.requires_capture',
      ]);
    });

    it('[W14] other capture methods emit no charge event', async () => {
      await endpoint();
      await paidIntent('succeeded', { amount: 10, capture_method: 'manual' });
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => d.body.event)).toEqual(['payment_intent.succeeded']);
    });

    it('[L2] a setup confirm with outcome errored emits setup_intent.errored', async () => {
      await endpoint();
      const intent = (await api('POST', '/setup_intents', {})).body;
      await confirm(baseUrl, intent.embed_token, 'errored');
      await sim.waitForIdle();
      expect(
        receiver.deliveries.map((d) => [d.body.event, (d.body.data['setup_intent'] as { state: string }).state]),
      ).toEqual([['setup_intent.errored', 'errored']]);
    });

    it('emit() triggers an event directly and moves the named intent', async () => {
      await endpoint();
      const intent = (await api('POST', '/payment_intents', { amount: 3 })).body;
      const event = sim.emit('payment_intent.errored_sale', intent.id);
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => d.body.id)).toEqual([event.id]);
      expect((await api('GET', `/payment_intents/${intent.id}`)).body.state).toBe('errored_sale');
    });

    it('emit() without an intent makes one for the first account', async () => {
      await endpoint();
      const event = sim.emit('setup_intent.succeeded');
      await sim.waitForIdle();
      const intentId = (event.data.setup_intent as { id: string }).id;
      expect(sim.intent(intentId)?.state).toBe('succeeded');
      expect(receiver.deliveries[0]!.body.event).toBe('setup_intent.succeeded');
    });
  });

  it('[W5] signs with the configured HMAC scheme so hmacVerifier accepts the raw body', async () => {
    const scheme = {
      header: 'x-payments-signature',
      prefix: 'sha256=',
      timestampHeader: 'x-payments-timestamp',
      signedPayload: 'timestamp.body',
    } as const;
    await boot({ signature: { scheme: 'hmac', ...scheme } });
    const { secret } = await endpoint();
    await paidIntent();
    await sim.waitForIdle();
    const delivery = receiver.deliveries[0]!;
    expect(
      hmacVerifier({ secrets: secret, ...scheme }).verify({
        rawBody: Buffer.from(delivery.rawBody),
        headers: delivery.headers,
      }),
    ).toEqual({ valid: true });
    expect(
      sim.verifierFor(secret).verify({ rawBody: Buffer.from(delivery.rawBody), headers: delivery.headers }),
    ).toEqual({ valid: true });
  });

  describe('[W4] retries', () => {
    beforeEach(() => boot());

    it('[W4] retries a non-2xx answer until a 2xx, with the same event id and body', async () => {
      receiver.behaviour = (n) => (n < 3 ? 500 : 200);
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => d.answeredWith)).toEqual([500, 500, 200]);
      expect(new Set(receiver.deliveries.map((d) => d.body.id)).size).toBe(1);
      expect(new Set(receiver.deliveries.map((d) => d.rawBody)).size).toBe(1);
      const [request] = sim.webhookRequests();
      expect(request).toMatchObject({ status: 'succeeded', attempt_count: 3, last_status_code: 200 });
      expect(request!.attempts.map((a) => [a.attempt, a.status_code, a.error])).toEqual([
        [1, 500, 'http_500'],
        [2, 500, 'http_500'],
        [3, 200, null],
      ]);
    });

    it('[W4] gives up after the retry schedule (length + 1 attempts) and marks the request failed', async () => {
      receiver.behaviour = () => 503;
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(receiver.deliveries).toHaveLength(4);
      expect(sim.webhookRequests()[0]).toMatchObject({ status: 'failed', attempt_count: 4 });
    });

    it('[W4] counts an answer that takes longer than deliveryTimeoutMs as a failed attempt and retries', async () => {
      await sim.stop();
      await boot({ deliveryTimeoutMs: 500 });
      receiver.behaviour = (n) => (n === 1 ? 'hang' : 200);
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(sim.webhookRequests()[0]!.attempts.map((a) => a.error)).toEqual(['timeout', null]);
    });

    it('[W4] records a refused connection as a failed attempt', async () => {
      await api('POST', '/webhook_endpoints', { url: 'http://127.0.0.1:1/unreachable' });
      await paidIntent('cancelled');
      await sim.waitForIdle();
      const [request] = sim.webhookRequests();
      expect(request!.status).toBe('failed');
      expect(request!.attempts[0]!.status_code).toBeNull();
      expect(request!.attempts[0]!.error).toBe('ECONNREFUSED');
    });
  });

  describe('[R4] WebhookRequests and WebhookAttempts over the API', () => {
    beforeEach(() => boot());

    it('[R4] lists requests, shows one, lists its attempts', async () => {
      receiver.behaviour = (n) => (n === 1 ? 500 : 200);
      const { id: webhookId } = await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      const list = await api('GET', '/webhook_requests');
      expect(list.status).toBe(200);
      expect(list.body.data).toHaveLength(1);
      const request = list.body.data[0];
      expect(request).toMatchObject({
        id: expect.stringMatching(UUID),
        webhook_id: webhookId,
        event: 'payment_intent.cancelled',
        status: 'succeeded',
        attempt_count: 2,
      });
      expect((await api('GET', `/webhook_requests/${request.id}`)).body).toEqual(request);
      const attempts = await api('GET', `/webhook_requests/${request.id}/attempts`);
      expect(attempts.body.data.map((a: { status_code: number }) => a.status_code)).toEqual([500, 200]);
    });

    it('[R4] resends a request: same event id, freshly signed, new attempt recorded', async () => {
      receiver.behaviour = () => 500;
      const { secret } = await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      const [failed] = (await api('GET', '/webhook_requests')).body.data;
      expect(failed.status).toBe('failed');

      receiver.behaviour = () => 200;
      const resent = await api('POST', `/webhook_requests/${failed.id}/resend`);
      expect(resent.status).toBe(202);
      await sim.waitForIdle();
      const last = receiver.deliveries.at(-1)!;
      expect(last.body.id).toBe(failed.event_id);
      expect(
        standardWebhooksVerifier({ secrets: secret }).verify({
          rawBody: Buffer.from(last.rawBody),
          headers: last.headers,
        }),
      ).toEqual({ valid: true });
      expect((await api('GET', `/webhook_requests/${failed.id}`)).body).toMatchObject({
        status: 'succeeded',
        attempt_count: 5,
      });
    });

    it('answers 403 to another account and 404 to an unknown request', async () => {
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      const [request] = sim.webhookRequests();
      sim.addApiKey('sk_other');
      expect((await apiClient(baseUrl, 'sk_other')('GET', `/webhook_requests/${request!.id}`)).status).toBe(403);
      expect((await api('GET', '/webhook_requests/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    });
  });

  describe('delivery controls', () => {
    beforeEach(() => boot());

    it('[W4] duplicateDeliveries(3) sends every event three times with one event id, at once', async () => {
      sim.controls.duplicateDeliveries(3);
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(receiver.deliveries).toHaveLength(3);
      expect(new Set(receiver.deliveries.map((d) => d.body.id)).size).toBe(1);
      expect(sim.webhookRequests()).toHaveLength(3);
    });

    it('duplicateDeliveries(2, "sequential") sends the second copy only after the first was answered', async () => {
      sim.controls.duplicateDeliveries(2, 'sequential');
      const statusesWhenReceived: string[][] = [];
      receiver.behaviour = () => {
        statusesWhenReceived.push(sim.webhookRequests().map((r) => r.status));
        return 200;
      };
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(statusesWhenReceived).toEqual([
        ['delivering', 'queued'],
        ['succeeded', 'delivering'],
      ]);
    });

    it('duplicateDeliveries(2) in the default concurrent mode has both copies in flight at once', async () => {
      sim.controls.duplicateDeliveries(2);
      const statusesWhenReceived: string[][] = [];
      receiver.behaviour = () => {
        statusesWhenReceived.push(sim.webhookRequests().map((r) => r.status));
        return 200;
      };
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(statusesWhenReceived[0]).toEqual(['delivering', 'delivering']);
    });

    it('outOfOrder("reverse") delivers the events of one confirm last-first', async () => {
      sim.controls.outOfOrder('reverse');
      await endpoint();
      await paidIntent('succeeded', { amount: 1, capture_method: 'automatic_async' });
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => d.body.event)).toEqual(['charge.succeeded', 'payment_intent.succeeded']);
    });

    it('hold() keeps deliveries back and release("reverse") sends them newest first', async () => {
      sim.controls.hold();
      await endpoint();
      const a = await paidIntent('cancelled');
      const b = await paidIntent('requires_review');
      expect(sim.webhookRequests().map((r) => r.status)).toEqual(['held', 'held']);
      await expect(sim.waitForIdle({ timeoutMs: 50 })).rejects.toThrow(/2 held/);
      expect(receiver.deliveries).toHaveLength(0);
      sim.controls.release('reverse');
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => (d.body.data['payment_intent'] as { id: string }).id)).toEqual([
        b.id,
        a.id,
      ]);
    });

    it('delayDeliveries(ms) schedules the first attempt ms later instead of sending at once', async () => {
      await sim.stop();
      const now = Date.UTC(2026, 0, 1);
      await boot({ now: () => now });
      sim.controls.delayDeliveries(60_000);
      await endpoint();
      await paidIntent('cancelled');
      const [request] = sim.webhookRequests();
      expect(request).toMatchObject({
        status: 'scheduled',
        attempt_count: 0,
        next_attempt_at: new Date(now + 60_000).toISOString(),
      });
      expect(receiver.deliveries).toHaveLength(0);
      // A resend does not wait for the delay, and the delayed attempt is not sent on top of it.
      expect((await api('POST', `/webhook_requests/${request!.id}/resend`)).status).toBe(202);
      await sim.waitForIdle();
      expect(receiver.deliveries).toHaveLength(1);
      expect(sim.webhookRequests()[0]).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    });

    it('delayDeliveries(ms) sends the delayed delivery when the delay has passed', async () => {
      sim.controls.delayDeliveries(20);
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(receiver.deliveries).toHaveLength(1);
    });

    it('release("shuffle") orders the backlog with the injected randomness', async () => {
      await sim.stop();
      await boot({ random: () => 0 }); // Fisher-Yates with j = 0 always: [a, b, c] -> [b, c, a]
      sim.controls.hold();
      await endpoint();
      const a = await paidIntent('cancelled');
      const b = await paidIntent('cancelled');
      const c = await paidIntent('cancelled');
      sim.controls.release('shuffle');
      await sim.waitForIdle();
      expect(receiver.deliveries.map((d) => (d.body.data['payment_intent'] as { id: string }).id)).toEqual([
        b.id,
        c.id,
        a.id,
      ]);
    });

    it('reset() turns the controls off', async () => {
      sim.controls.duplicateDeliveries(3).outOfOrder('reverse').reset();
      await endpoint();
      await paidIntent('cancelled');
      await sim.waitForIdle();
      expect(receiver.deliveries).toHaveLength(1);
    });
  });

  it('stop() cancels pending retries and leaves nothing running', async () => {
    await boot({ retrySchedule: [60_000] });
    receiver.behaviour = () => 500;
    await endpoint();
    await paidIntent('cancelled');
    await receiver.waitFor(1);
    const idle = sim.waitForIdle({ timeoutMs: 60_000 });
    await sim.stop();
    await expect(idle).rejects.toThrow(/stopped/);
    expect(receiver.deliveries).toHaveLength(1);
  });
});
