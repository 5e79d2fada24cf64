import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PaymentDeliveryJournal,
  PaymentsConfigurationError,
  PaymentsModule,
  type PaymentDeliveryListener,
} from '../../../lib/index.js';
import { validatePaymentsOptions } from '../../../lib/payments-options.validator.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { FulfilmentHandler, PAYMENT_HANDLER_FIXTURES } from '../../fixtures/webhooks/payment-handlers.fixture.js';
import {
  API_KEY,
  CURRENT_SECRET,
  ENDPOINT_ID,
  fixtureOptions,
  post,
  sign,
  startWebhookApp,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';

const PATH = 'payments/webhooks';

describe.each(['express', 'fastify'] as const)('webhooks.deliveryListener on %s', (adapter) => {
  const logger = new CapturingLogger();
  const journal = new PaymentDeliveryJournal({ maxEntries: 10 });
  let main: WebhookApp;
  let url: string;
  let fulfilment: FulfilmentHandler;

  beforeAll(async () => {
    main = await startWebhookApp({
      adapter,
      logger,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(
        fixtureOptions({ endpointIds: [ENDPOINT_ID], requireHttps: false, deliveryListener: journal }),
      ),
    });
    url = `${main.baseUrl}/${PATH}`;
    fulfilment = main.app.get(FulfilmentHandler);
  });
  afterAll(async () => {
    await main?.close();
  });

  it('records a failed delivery, its redelivery handled, and a duplicate dropped, for the same event', async () => {
    const event = createPaymentEvent('payment_intent.succeeded', { webhook_id: ENDPOINT_ID });
    let fail = true;
    fulfilment.behaviour = () => {
      if (fail) throw new Error('warehouse down');
    };
    expect((await post(url, sign(event))).status).toBe(500);
    let entry = journal.entry(event.id)!;
    expect(entry.lastAnswer).toEqual({ status: 500, outcome: 'failed' });
    expect(entry.handlers.find((h) => h.handler === 'FulfilmentHandler.paid')).toMatchObject({
      status: 'failed',
      error: 'Error: warehouse down',
    });

    fail = false;
    expect((await post(url, sign(event))).status).toBe(200);
    expect((await post(url, sign(event))).status).toBe(200);
    entry = journal.entry(event.id)!;
    expect(entry).toMatchObject({
      deliveries: 3,
      dispatches: 3,
      lastAnswer: { status: 200, outcome: 'duplicate' },
      lastDispatch: 'duplicate',
    });
    expect(fulfilment.callsFor(event.id)).toHaveLength(2);
    expect(journal.totals()).toMatchObject({ duplicatesDropped: 1, handlerFailures: 1 });
    fulfilment.reset();
  });

  it('records a delivery the checks refused as a rejection (status and reason only), never as a delivery of its event', async () => {
    const before = journal.totals();
    const event = createPaymentEvent('payment_intent.succeeded', { webhook_id: ENDPOINT_ID });
    const forged = sign(event, {
      secret: `whsec_${Buffer.from('not-the-endpoint-secret-32-bytes').toString('base64')}`,
    });
    expect((await post(url, forged)).status).toBe(401);
    expect(journal.totals().deliveries).toBe(before.deliveries);
    expect(journal.totals().rejected).toBe(before.rejected + 1);
    expect(journal.entry(event.id)).toBeUndefined();
    const [latest] = journal.rejections();
    expect(Object.keys(latest!).sort()).toEqual(['at', 'reason', 'status']);
    expect(latest).toMatchObject({ status: 401, reason: 'invalid_signature' });

    expect((await post(url, { headers: { 'content-type': 'application/json' }, rawBody: '{}' } as never)).status).toBe(
      401,
    );
    expect(journal.totals().rejected).toBe(before.rejected + 2);
  });

  it('never changes the answer when the listener throws, and logs it at warn, not error', async () => {
    const throwing: PaymentDeliveryListener = {
      onDelivery: () => {
        throw new Error(`listener bug ${CURRENT_SECRET}`);
      },
    };
    const log = new CapturingLogger();
    const app = await startWebhookApp({
      adapter,
      logger: log,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(fixtureOptions({ requireHttps: false, deliveryListener: throwing })),
    });
    try {
      const event = createPaymentEvent('payment_intent.succeeded', { webhook_id: ENDPOINT_ID });
      expect((await post(`${app.baseUrl}/${PATH}`, sign(event))).status).toBe(200);
      const text = log.text();
      expect(text).toContain('deliveryListener.onDelivery threw');
      expect(text).not.toContain(CURRENT_SECRET);
      expect(text).not.toContain(API_KEY);
      expect(log.messages('error')).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe('webhooks.deliveryListener validation', () => {
  it('fails at boot naming the option when the listener has neither method', () => {
    const bad = fixtureOptions({ deliveryListener: {} as PaymentDeliveryListener });
    expect(() => validatePaymentsOptions(bad)).toThrow(PaymentsConfigurationError);
    expect(() => validatePaymentsOptions(bad)).toThrow(/webhooks\.deliveryListener/);
    expect(() =>
      validatePaymentsOptions(fixtureOptions({ deliveryListener: new PaymentDeliveryJournal() })),
    ).not.toThrow();
  });
});
