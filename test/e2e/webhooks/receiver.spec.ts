import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import {
  PaymentsModule,
  hmacVerifier,
  type PaymentEvent,
  type PaymentIntent,
  type PaymentEventType,
  type WebhookVerifier,
} from '../../../lib/index.js';
import { PaymentEventsRegistry } from '../../../lib/webhooks/index.js';
import { createPaymentEvent, signWebhook, type PaymentEventOverrides } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { ControllableIdempotencyStore } from '../../fixtures/webhooks/controllable-idempotency.store.js';
import { deferred, until } from '../../fixtures/webhooks/deferred.js';
import { DenyAllButWebhooksGuard, TeapotEverythingFilter } from '../../fixtures/webhooks/host-guards.fixture.js';
import { startIntentsServer, type IntentsServer } from '../../fixtures/webhooks/intents-server.fixture.js';
import {
  FulfilmentHandler,
  PAYMENT_HANDLER_FIXTURES,
  PaymentAuditHandler,
  SetupHandler,
} from '../../fixtures/webhooks/payment-handlers.fixture.js';
import {
  API_KEY,
  CURRENT_SECRET,
  ENDPOINT_ID,
  FOREIGN_SECRET,
  OrdersController,
  PREVIOUS_SECRET,
  fixtureOptions,
  post,
  postHttps,
  sign,
  startWebhookApp,
  type AdapterName,
  type WebhookApp,
} from '../../fixtures/webhooks/webhook-app.fixture.js';

const PATH = 'payments/webhooks';
const MAX_BODY_BYTES = 4096;
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** A valid event for the accepted endpoint. */
function paymentEvent<T extends PaymentEventType>(type: T, overrides: PaymentEventOverrides = {}): PaymentEvent<T> {
  return createPaymentEvent(type, { webhook_id: ENDPOINT_ID, ...overrides });
}

let intents: IntentsServer;
beforeAll(async () => {
  intents = await startIntentsServer();
});
afterAll(async () => {
  await intents.close();
});

describe.each(['express', 'fastify'] as const)('webhook receiver on %s', (adapter: AdapterName) => {
  const logger = new CapturingLogger();
  const store = new ControllableIdempotencyStore();
  let main: WebhookApp;
  let url: string;
  let fulfilment: FulfilmentHandler;
  let audit: PaymentAuditHandler;
  let setup: SetupHandler;

  beforeAll(async () => {
    main = await startWebhookApp({
      adapter,
      logger,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(
        fixtureOptions(
          { store, endpointIds: [ENDPOINT_ID], maxBodyBytes: MAX_BODY_BYTES, requireHttps: false },
          intents.baseUrl,
        ),
      ),
    });
    url = `${main.baseUrl}/${PATH}`;
    fulfilment = main.app.get(FulfilmentHandler);
    audit = main.app.get(PaymentAuditHandler);
    setup = main.app.get(SetupHandler);
  });
  afterAll(async () => {
    await main?.close();
  });
  beforeEach(() => {
    for (const handler of [fulfilment, audit, setup]) handler.reset();
    store.down = false;
    store.calls = 0;
    logger.clear();
  });

  describe('the delivery table', () => {
    it('[W4] a valid new event answers 200 (not 201) and runs each bound handler once', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      const answer = await post(url, sign(event));
      expect(answer).toEqual({ status: 200, body: { received: true, outcome: 'handled' } });
      expect(fulfilment.callsFor(event.id)).toHaveLength(1);
      expect(audit.callsFor(event.id)).toHaveLength(1);
      expect(setup.calls).toHaveLength(0);
    });

    it('[W4] a repeat of a finished event answers 200 and runs no handler again', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      expect((await post(url, sign(event))).status).toBe(200);
      const repeat = await post(url, sign(event));
      expect(repeat).toEqual({ status: 200, body: { received: true, outcome: 'duplicate' } });
      expect(fulfilment.callsFor(event.id)).toHaveLength(1);
      expect(audit.callsFor(event.id)).toHaveLength(1);
    });

    it('[W4] the same event while in flight answers 409 and runs nothing; the first delivery owns it', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      const gate = deferred();
      fulfilment.behaviour = () => gate.promise;
      const first = post(url, sign(event));
      await until(() => fulfilment.callsFor(event.id).length === 1, 'the first delivery to start the handler');

      const second = await post(url, sign(event));
      expect(second).toEqual({ status: 409, body: { received: true, outcome: 'busy' } });
      expect(fulfilment.callsFor(event.id)).toHaveLength(1);

      gate.resolve();
      expect(await first).toEqual({ status: 200, body: { received: true, outcome: 'handled' } });
      expect(fulfilment.callsFor(event.id)).toHaveLength(1);
    });

    it('[W9] an unknown event type answers 200 and reaches no handler, not even a wildcard one', async () => {
      const event = { ...paymentEvent('payment_intent.succeeded'), event: 'payment_intent.invented_state' };
      const answer = await post(url, sign(event));
      expect(answer).toEqual({ status: 200, body: { received: true, outcome: 'unhandled' } });
      expect(audit.calls).toHaveLength(0);
      expect(fulfilment.calls).toHaveLength(0);
      expect(logger.lines.some((line) => line.level === 'debug' && line.message.includes(event.id))).toBe(true);
    });

    it('[W9] a documented event no handler subscribes to answers 200 and runs nothing', async () => {
      const event = paymentEvent('charge.succeeded');
      expect(await post(url, sign(event))).toEqual({ status: 200, body: { received: true, outcome: 'unhandled' } });
      expect([...fulfilment.calls, ...audit.calls, ...setup.calls]).toHaveLength(0);
    });

    it('[W9] handlers branch on `event`: a setup event reaches only the setup handler', async () => {
      const event = paymentEvent('setup_intent.failed');
      expect((await post(url, sign(event))).status).toBe(200);
      expect(setup.callsFor(event.id)).toEqual([expect.objectContaining({ type: 'setup_intent.failed' })]);
      expect([...fulfilment.calls, ...audit.calls]).toHaveLength(0);
    });

    it('[W5] a delivery without signature headers answers 401', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      const answer = await post(url, {
        rawBody: JSON.stringify(event),
        headers: { 'content-type': 'application/json' },
      });
      expect(answer).toEqual({ status: 401, body: { received: false, error: 'invalid_signature' } });
      expect(fulfilment.calls).toHaveLength(0);
    });

    it('[W5] a delivery signed with a secret the endpoint does not have answers 401', async () => {
      const answer = await post(url, sign(paymentEvent('payment_intent.succeeded'), { secret: FOREIGN_SECRET }));
      expect(answer).toEqual({ status: 401, body: { received: false, error: 'invalid_signature' } });
      expect(fulfilment.calls).toHaveLength(0);
    });

    it('[W5] a stale timestamp answers 401', async () => {
      const answer = await post(
        url,
        sign(paymentEvent('payment_intent.succeeded'), { timestamp: nowSeconds() - 3600 }),
      );
      expect(answer.status).toBe(401);
      expect(fulfilment.calls).toHaveLength(0);
    });

    it('[W5] a timestamp from the future answers 401', async () => {
      const answer = await post(
        url,
        sign(paymentEvent('payment_intent.succeeded'), { timestamp: nowSeconds() + 3600 }),
      );
      expect(answer.status).toBe(401);
      expect(fulfilment.calls).toHaveLength(0);
    });

    it('[W5] a correctly signed delivery for another endpoint (unknown webhook_id) answers 401', async () => {
      const event = createPaymentEvent('payment_intent.succeeded');
      const answer = await post(url, sign(event));
      expect(answer).toEqual({ status: 401, body: { received: false, error: 'unknown_endpoint' } });
      expect(fulfilment.calls).toHaveLength(0);
    });

    it('[W5] webhook_id is matched against endpointIds case-insensitively', async () => {
      const event = paymentEvent('payment_intent.succeeded', { webhook_id: ENDPOINT_ID.toUpperCase() });
      expect((await post(url, sign(event))).status).toBe(200);
      expect(fulfilment.callsFor(event.id)).toHaveLength(1);
    });

    it('[W2] a refused delivery changes no state: the idempotency store is not touched', async () => {
      await post(url, sign(paymentEvent('payment_intent.succeeded'), { secret: FOREIGN_SECRET }));
      await post(url, sign(createPaymentEvent('payment_intent.succeeded')));
      await post(
        url,
        sign({
          id: 'not-a-uuid',
          webhook_id: ENDPOINT_ID,
          event: 'payment_intent.succeeded',
          data: {},
          metadata: null,
        }),
      );
      expect(store.calls).toBe(0);
      expect([...fulfilment.calls, ...audit.calls]).toHaveLength(0);
    });

    it('[W13] a correctly signed body that is not JSON answers 400', async () => {
      const answer = await post(url, sign('{"id": "3f1c", this is not json'));
      expect(answer.status).toBe(400);
      expect(store.calls).toBe(0);
    });

    const badShapes: Array<[string, (event: Record<string, unknown>) => unknown]> = [
      ['id is not a UUID', (e) => ({ ...e, id: 'evt_123' })],
      ['webhook_id is missing', ({ webhook_id: _omit, ...e }) => e],
      ['event is an empty string', (e) => ({ ...e, event: '' })],
      ['event is not a string', (e) => ({ ...e, event: 42 })],
      ['data is an array', (e) => ({ ...e, data: [] })],
      ['data is null', (e) => ({ ...e, data: null })],
      ['metadata is a string', (e) => ({ ...e, metadata: 'vip' })],
      ['the body is a JSON array', (e) => [e]],
    ];
    it.each(badShapes)('[W13] a correctly signed payload whose %s answers 400', async (_case, mutate) => {
      const payload = mutate(paymentEvent('payment_intent.succeeded') as unknown as Record<string, unknown>);
      const answer = await post(url, sign(JSON.stringify(payload)));
      expect(answer).toEqual({ status: 400, body: { received: false, error: 'invalid_payload' } });
      expect(store.calls).toBe(0);
      expect(fulfilment.calls).toHaveLength(0);
    });

    it('[W13] metadata may be an object, and extra top-level fields are kept', async () => {
      const event = { ...paymentEvent('payment_intent.succeeded', { metadata: { order: 'A-1' } }), livemode: false };
      let seen: unknown;
      fulfilment.behaviour = (received) => {
        seen = received;
      };
      expect((await post(url, sign(event))).status).toBe(200);
      expect(seen).toEqual(event);
    });

    it('a body over maxBodyBytes answers 413 and runs nothing', async () => {
      const event = paymentEvent('payment_intent.succeeded', { metadata: { padding: 'x'.repeat(MAX_BODY_BYTES) } });
      const answer = await post(url, sign(event));
      expect(answer.status).toBe(413);
      expect(fulfilment.calls).toHaveLength(0);
      expect(store.calls).toBe(0);
    });

    it('[W4] a handler that throws answers 500, and the redelivery runs only the failed handler', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      fulfilment.behaviour = (_event, ctx) => {
        if (ctx.deliveryAttempt === 1) throw new Error('warehouse unreachable');
      };
      const first = await post(url, sign(event));
      expect(first).toEqual({ status: 500, body: { received: true, outcome: 'failed' } });
      expect(audit.callsFor(event.id)).toHaveLength(1);

      const redelivery = await post(url, sign(event));
      expect(redelivery).toEqual({ status: 200, body: { received: true, outcome: 'handled' } });
      expect(fulfilment.callsFor(event.id).map((call) => call.deliveryAttempt)).toEqual([1, 2]);
      expect(audit.callsFor(event.id)).toHaveLength(1);
      expect(
        logger.messages('error').some((line) => line.includes('FulfilmentHandler.paid') && line.includes(event.id)),
      ).toBe(true);
    });

    it('a store that is down answers 503 and runs no handler', async () => {
      store.down = true;
      const event = paymentEvent('payment_intent.succeeded');
      const answer = await post(url, sign(event));
      expect(answer).toEqual({ status: 503, body: { received: true, outcome: 'store_unavailable' } });
      expect([...fulfilment.calls, ...audit.calls]).toHaveLength(0);

      store.down = false;
      expect((await post(url, sign(event))).status).toBe(200);
      expect(fulfilment.callsFor(event.id)).toHaveLength(1);
    });

    it('[W4] 25 simultaneous copies of one new event run each handler exactly once', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      const gate = deferred();
      fulfilment.behaviour = () => gate.promise;
      const answers: number[] = [];
      const copies = Array.from({ length: 25 }, () =>
        post(url, sign(event)).then((answer) => {
          answers.push(answer.status);
          return answer.status;
        }),
      );
      // Whichever copy claimed the handler is held at the gate; every other copy must be refused meanwhile.
      await until(() => answers.length === 24, '24 copies to be answered while the first is in flight');
      expect(answers.every((status) => status === 409)).toBe(true);
      gate.resolve();
      const statuses = await Promise.all(copies);
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(24);

      // The service redelivers each refused copy: now they are duplicates.
      const redeliveries = await Promise.all(
        statuses.filter((status) => status === 409).map(() => post(url, sign(event))),
      );
      expect(redeliveries.every((answer) => answer.status === 200)).toBe(true);
      expect(fulfilment.callsFor(event.id)).toHaveLength(1);
      expect(audit.callsFor(event.id)).toHaveLength(1);
    });
  });

  describe('signatures', () => {
    it('[W7] rotation: deliveries signed with the current or the previous secret are both accepted', async () => {
      const current = paymentEvent('payment_intent.succeeded');
      const previous = paymentEvent('payment_intent.succeeded');
      expect((await post(url, sign(current, { secret: CURRENT_SECRET }))).status).toBe(200);
      expect((await post(url, sign(previous, { secret: PREVIOUS_SECRET }))).status).toBe(200);
      expect(fulfilment.calls.map((call) => call.eventId)).toEqual([current.id, previous.id]);
    });

    it('[W1] a body changed after signing answers 401', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      const signed = sign(event);
      const tampered = { ...signed, rawBody: signed.rawBody.replace('"amount":1000', '"amount":1') };
      expect(tampered.rawBody).not.toBe(signed.rawBody);
      expect(await post(url, tampered)).toEqual({ status: 401, body: { received: false, error: 'invalid_signature' } });
      expect(fulfilment.calls).toHaveLength(0);
    });

    it('[W1] a re-serialised body (same JSON value, other bytes) answers 401', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      const signed = sign(JSON.stringify(event, null, 2));
      const reserialised = { ...signed, rawBody: JSON.stringify(JSON.parse(signed.rawBody)) };
      expect(await post(url, reserialised)).toEqual({
        status: 401,
        body: { received: false, error: 'invalid_signature' },
      });
    });

    it('[W1] the exact bytes are verified: pretty-printed JSON with unicode escapes is accepted as signed', async () => {
      const event = paymentEvent('payment_intent.succeeded', { metadata: { customer: 'Zo\u00eb' } });
      const raw = JSON.stringify(event, null, 3).replace('Zo\u00eb', 'Zo\\u00eb');
      let seen: PaymentEvent | undefined;
      fulfilment.behaviour = (received) => {
        seen = received;
      };
      expect((await post(url, sign(raw))).status).toBe(200);
      expect(seen?.metadata).toEqual({ customer: 'Zo\u00eb' });
    });
  });

  describe('signatures with hmacVerifier', () => {
    const scheme = {
      header: 'x-payments-signature',
      prefix: 'sha256=',
      timestampHeader: 'x-payments-timestamp',
      signedPayload: 'timestamp.body',
    } as const;
    const secret = 'hmac-endpoint-secret';
    let hmacApp: WebhookApp;
    beforeAll(async () => {
      hmacApp = await startWebhookApp({
        adapter,
        logger,
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRoot({
          ...fixtureOptions(),
          webhooks: { verifier: hmacVerifier({ secrets: ['rotated-out', secret], ...scheme }) },
        }),
      });
    });
    afterAll(async () => {
      await hmacApp?.close();
    });

    it('[W8] accepts a delivery signed with the HMAC scheme it was configured with', async () => {
      const event = createPaymentEvent('payment_intent.succeeded');
      const signed = signWebhook(event, { scheme: 'hmac', secret, ...scheme });
      expect(await post(`${hmacApp.baseUrl}/${PATH}`, signed)).toEqual({
        status: 200,
        body: { received: true, outcome: 'handled' },
      });
      expect(hmacApp.app.get(FulfilmentHandler).callsFor(event.id)).toHaveLength(1);
    });

    it('[W8] refuses a Standard Webhooks signature: no scheme is assumed beyond the configured one', async () => {
      expect(
        (await post(`${hmacApp.baseUrl}/${PATH}`, sign(createPaymentEvent('payment_intent.succeeded')))).status,
      ).toBe(401);
    });

    it('[W5] refuses an HMAC delivery with another secret or an old timestamp', async () => {
      const event = createPaymentEvent('payment_intent.succeeded');
      expect(
        (
          await post(
            `${hmacApp.baseUrl}/${PATH}`,
            signWebhook(event, { scheme: 'hmac', secret: 'not-the-secret', ...scheme }),
          )
        ).status,
      ).toBe(401);
      const stale = signWebhook(event, { scheme: 'hmac', secret, ...scheme, timestamp: nowSeconds() - 3600 });
      expect((await post(`${hmacApp.baseUrl}/${PATH}`, stale)).status).toBe(401);
    });
  });

  describe('a custom verifier', () => {
    it('[W1] receives the exact bytes sent, as a Buffer, and the lower-cased headers; may be async', async () => {
      const seen: Array<{ rawBody: Buffer; signature: unknown }> = [];
      const verifier: WebhookVerifier = {
        async verify({ rawBody, headers }) {
          seen.push({ rawBody, signature: headers['x-custom-signature'] });
          return headers['x-custom-signature'] === 'let-me-in'
            ? { valid: true }
            : { valid: false, reason: 'custom_mismatch' };
        },
      };
      const custom = await startWebhookApp({
        adapter,
        logger,
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRoot({ ...fixtureOptions(), webhooks: { verifier } }),
      });
      try {
        const rawBody = JSON.stringify(createPaymentEvent('payment_intent.succeeded'), null, 1);
        const ok = await post(`${custom.baseUrl}/${PATH}`, {
          rawBody,
          headers: { 'content-type': 'application/json', 'X-Custom-Signature': 'let-me-in' },
        });
        expect(ok.status).toBe(200);
        expect(Buffer.isBuffer(seen[0]?.rawBody)).toBe(true);
        expect(seen[0]!.rawBody.equals(Buffer.from(rawBody))).toBe(true);
        const refused = await post(`${custom.baseUrl}/${PATH}`, {
          rawBody,
          headers: { 'content-type': 'application/json', 'X-Custom-Signature': 'nope' },
        });
        expect(refused).toEqual({ status: 401, body: { received: false, error: 'invalid_signature' } });
        expect(logger.text()).toContain('custom_mismatch');
      } finally {
        await custom.close();
      }
    });

    it('[W5] a verifier that throws counts as a failed verification (401)', async () => {
      const verifier: WebhookVerifier = {
        verify() {
          throw new Error('malformed header');
        },
      };
      const custom = await startWebhookApp({
        adapter,
        logger,
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRoot({ ...fixtureOptions(), webhooks: { verifier } }),
      });
      try {
        const event = createPaymentEvent('payment_intent.succeeded');
        expect((await post(`${custom.baseUrl}/${PATH}`, sign(event))).status).toBe(401);
        expect(custom.app.get(FulfilmentHandler).calls).toHaveLength(0);
      } finally {
        await custom.close();
      }
    });
  });

  describe('handlers', () => {
    it('[W12] ctx.retrieveIntent() GETs the intent the event names when data lacks a field', async () => {
      const event = paymentEvent('payment_intent.succeeded');
      const intentId = event.data.payment_intent!.id;
      (event.data as Record<string, unknown>).payment_intent = { id: intentId };
      let retrieved: PaymentIntent | undefined;
      fulfilment.behaviour = async (_event, ctx) => {
        retrieved = (await ctx.retrieveIntent()) as PaymentIntent;
      };
      intents.requests.length = 0;
      expect((await post(url, sign(event))).status).toBe(200);
      expect(retrieved).toEqual({
        id: intentId,
        state: 'requires_capture',
        amount: 4200,
        capture_method: 'automatic_async',
      });
      expect(intents.requests).toEqual([{ method: 'GET', path: `/payment_intents/${intentId}`, hasApiKey: true }]);
    });

    it('the context carries the delivery attempt and the reception time', async () => {
      const before = Date.now();
      const event = paymentEvent('payment_intent.succeeded');
      await post(url, sign(event));
      const [call] = fulfilment.callsFor(event.id);
      expect(call?.deliveryAttempt).toBe(1);
      expect(call?.receivedAt).toBeInstanceOf(Date);
      expect(call!.receivedAt.getTime()).toBeGreaterThanOrEqual(before);
    });

    it('[W10] the registry lists exactly the event types the app handles', () => {
      const registry = main.app.get(PaymentEventsRegistry);
      expect(registry.handledEventTypes()).toEqual([
        'payment_intent.cancelled',
        'payment_intent.errored_authorization',
        'payment_intent.errored_capture',
        'payment_intent.errored_sale',
        'payment_intent.requires_capture',
        'payment_intent.requires_confirmation',
        'payment_intent.requires_payment_method',
        'payment_intent.requires_review',
        'payment_intent.succeeded',
        'setup_intent.errored',
        'setup_intent.failed',
        'setup_intent.succeeded',
      ]);
      expect(registry.handlersFor('payment_intent.succeeded').map((handler) => handler.id)).toEqual([
        'FulfilmentHandler.paid',
        'PaymentAuditHandler.audit',
      ]);
    });

    it('logs name the event, handler and outcome, never the body, a header value, the secret or the API key', async () => {
      const event = paymentEvent('payment_intent.succeeded', { metadata: { marker: 'body-marker-5b1e' } });
      const signed = sign(event);
      // A handled delivery logs nothing by default (docs/logging.md): a failed one names event and handler.
      fulfilment.behaviour = () => {
        throw new Error('warehouse offline');
      };
      await post(url, signed);
      await post(url, sign(paymentEvent('payment_intent.succeeded'), { secret: FOREIGN_SECRET }));
      const text = logger.text();
      expect(text).toContain(`Failed event ${event.id} (payment_intent.succeeded) handler FulfilmentHandler.paid`);
      expect(text).toContain('Rejected delivery with 401 invalid_signature');
      for (const secret of [
        CURRENT_SECRET,
        PREVIOUS_SECRET,
        FOREIGN_SECRET,
        API_KEY,
        'body-marker-5b1e',
        signed.headers['webhook-signature']!,
      ]) {
        expect(text).not.toContain(secret);
      }
    });
  });

  describe('transport', () => {
    let strict: WebhookApp;
    let proxied: WebhookApp;
    beforeAll(async () => {
      const options = fixtureOptions({ requireHttps: true });
      strict = await startWebhookApp({
        adapter,
        logger,
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRoot(options),
      });
      proxied = await startWebhookApp({
        adapter,
        logger,
        trustProxy: true,
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRoot(options),
      });
    });
    afterAll(async () => {
      await strict?.close();
      await proxied?.close();
    });

    it('[W6] plain HTTP answers 403 when HTTPS is required', async () => {
      const answer = await post(`${strict.baseUrl}/${PATH}`, sign(paymentEvent('payment_intent.succeeded')));
      expect(answer).toEqual({ status: 403, body: { received: false, error: 'https_required' } });
      expect(strict.app.get(FulfilmentHandler).calls).toHaveLength(0);
    });

    it('[W6] a delivery over HTTPS is accepted when HTTPS is required', async () => {
      const tls = await startWebhookApp({
        adapter,
        logger,
        https: true,
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRoot(fixtureOptions({ requireHttps: true })),
      });
      try {
        const event = createPaymentEvent('payment_intent.succeeded');
        expect(await postHttps(`${tls.baseUrl}/${PATH}`, sign(event))).toEqual({
          status: 200,
          body: { received: true, outcome: 'handled' },
        });
        expect(tls.app.get(FulfilmentHandler).callsFor(event.id)).toHaveLength(1);
      } finally {
        await tls.close();
      }
    });

    it('[W6] X-Forwarded-Proto is ignored when the app does not trust its proxy', async () => {
      const answer = await post(`${strict.baseUrl}/${PATH}`, sign(paymentEvent('payment_intent.succeeded')), {
        'x-forwarded-proto': 'https',
      });
      expect(answer.status).toBe(403);
    });

    it('[W6] behind a trusted proxy, X-Forwarded-Proto: https is accepted and plain HTTP still refused', async () => {
      const ok = await post(`${proxied.baseUrl}/${PATH}`, sign(paymentEvent('payment_intent.succeeded')), {
        'x-forwarded-proto': 'https',
      });
      expect(ok.status).toBe(200);
      const plain = await post(`${proxied.baseUrl}/${PATH}`, sign(paymentEvent('payment_intent.succeeded')), {
        'x-forwarded-proto': 'http',
      });
      expect(plain.status).toBe(403);
    });

    it('[W1] an app created without rawBody answers 500 and logs the fix', async () => {
      const bare = await startWebhookApp({ adapter, logger, rawBody: false, providers: PAYMENT_HANDLER_FIXTURES });
      try {
        logger.clear();
        const answer = await post(`${bare.baseUrl}/${PATH}`, sign(paymentEvent('payment_intent.succeeded')));
        expect(answer).toEqual({ status: 500, body: { received: false, error: 'raw_body_unavailable' } });
        expect(bare.app.get(FulfilmentHandler).calls).toHaveLength(0);
        expect(logger.messages('error').join('\n')).toContain('NestFactory.create(AppModule, { rawBody: true })');
      } finally {
        await bare.close();
      }
    });
  });

  describe('routing and the host app', () => {
    it("a host's global guard that denies everything else lets the webhook route through (isPaymentsWebhookRoute)", async () => {
      const host = await startWebhookApp({
        adapter,
        logger,
        controllers: [OrdersController],
        providers: [
          ...PAYMENT_HANDLER_FIXTURES,
          { provide: APP_GUARD, useClass: DenyAllButWebhooksGuard },
          { provide: APP_FILTER, useClass: TeapotEverythingFilter },
        ],
      });
      try {
        const orders = await fetch(`${host.baseUrl}/orders`);
        expect(orders.status).toBe(418);
        const event = createPaymentEvent('payment_intent.succeeded');
        expect(await post(`${host.baseUrl}/${PATH}`, sign(event))).toEqual({
          status: 200,
          body: { received: true, outcome: 'handled' },
        });
        expect(host.app.get(FulfilmentHandler).callsFor(event.id)).toHaveLength(1);
        // The host's global filter does not rewrite the receiver's refusals either.
        const refused = await post(`${host.baseUrl}/${PATH}`, sign(event, { secret: FOREIGN_SECRET }));
        expect(refused).toEqual({ status: 401, body: { received: false, error: 'invalid_signature' } });
      } finally {
        await host.close();
      }
    });

    it('webhooks.path moves the route (slashes trimmed)', async () => {
      const custom = await startWebhookApp({
        adapter,
        logger,
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRoot(fixtureOptions({ path: '/billing/incoming-events/' })),
      });
      try {
        const event = createPaymentEvent('payment_intent.succeeded');
        expect((await post(`${custom.baseUrl}/billing/incoming-events`, sign(event))).status).toBe(200);
        expect((await post(`${custom.baseUrl}/${PATH}`, sign(event))).status).toBe(404);
      } finally {
        await custom.close();
      }
    });

    it("the app's global prefix applies to the route", async () => {
      const prefixed = await startWebhookApp({
        adapter,
        logger,
        globalPrefix: 'api',
        providers: PAYMENT_HANDLER_FIXTURES,
      });
      try {
        const event = createPaymentEvent('payment_intent.succeeded');
        expect((await post(`${prefixed.baseUrl}/api/${PATH}`, sign(event))).status).toBe(200);
        expect(prefixed.app.get(FulfilmentHandler).callsFor(event.id)).toHaveLength(1);
      } finally {
        await prefixed.close();
      }
    });

    it('webhooks: false registers no route (404)', async () => {
      const none = await startWebhookApp({ adapter, logger, payments: PaymentsModule.forRoot(fixtureOptions(false)) });
      try {
        expect(
          (await post(`${none.baseUrl}/${PATH}`, sign(createPaymentEvent('payment_intent.succeeded')))).status,
        ).toBe(404);
      } finally {
        await none.close();
      }
    });

    it('forRootAsync registers the route at the static receiver.path', async () => {
      const asyncApp = await startWebhookApp({
        adapter,
        logger,
        providers: PAYMENT_HANDLER_FIXTURES,
        payments: PaymentsModule.forRootAsync({
          receiver: { path: 'async/hooks' },
          useFactory: async () => fixtureOptions({ path: 'async/hooks' }),
        }),
      });
      try {
        const event = createPaymentEvent('payment_intent.succeeded');
        expect((await post(`${asyncApp.baseUrl}/async/hooks`, sign(event))).status).toBe(200);
        expect(asyncApp.app.get(FulfilmentHandler).callsFor(event.id)).toHaveLength(1);
      } finally {
        await asyncApp.close();
      }
    });

    it('forRootAsync fails at boot, naming receiver.path, when the factory asks for another path', async () => {
      await expect(
        startWebhookApp({
          adapter,
          logger,
          payments: PaymentsModule.forRootAsync({ useFactory: async () => fixtureOptions({ path: 'elsewhere' }) }),
        }),
      ).rejects.toThrow(
        expect.objectContaining({ name: 'PaymentsConfigurationError', option: 'receiver.path' }) as unknown as Error,
      );
    });

    it('forRootAsync whose factory returns webhooks: false answers 404 on the registered route', async () => {
      const off = await startWebhookApp({
        adapter,
        logger,
        payments: PaymentsModule.forRootAsync({ useFactory: async () => fixtureOptions(false) }),
      });
      try {
        const answer = await post(`${off.baseUrl}/${PATH}`, sign(createPaymentEvent('payment_intent.succeeded')));
        expect(answer).toEqual({ status: 404, body: { received: false, error: 'webhooks_disabled' } });
      } finally {
        await off.close();
      }
    });
  });
});

describe('webhook receiver on express with bodyParser: false (the module reads the body)', () => {
  const logger = new CapturingLogger();
  let app: WebhookApp;
  let url: string;

  beforeAll(async () => {
    app = await startWebhookApp({
      adapter: 'express',
      logger,
      rawBody: false,
      bodyParser: false,
      providers: PAYMENT_HANDLER_FIXTURES,
      payments: PaymentsModule.forRoot(fixtureOptions({ maxBodyBytes: MAX_BODY_BYTES })),
    });
    url = `${app.baseUrl}/${PATH}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('[W1] verifies and handles a delivery from the raw stream', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    expect(await post(url, sign(event))).toEqual({ status: 200, body: { received: true, outcome: 'handled' } });
    expect(app.app.get(FulfilmentHandler).callsFor(event.id)).toHaveLength(1);
  });

  it('[W1] a tampered body answers 401', async () => {
    const signed = sign(createPaymentEvent('payment_intent.succeeded'));
    expect(
      (await post(url, { ...signed, rawBody: signed.rawBody.replace('"amount":1000', '"amount":1') })).status,
    ).toBe(401);
  });

  it('[W13] a signed body that is not JSON answers 400 invalid_json (parsed only after verification)', async () => {
    expect(await post(url, sign('not json at all'))).toEqual({
      status: 400,
      body: { received: false, error: 'invalid_json' },
    });
  });

  it('[W1] the middleware follows the route under a global prefix', async () => {
    const prefixed = await startWebhookApp({
      adapter: 'express',
      logger,
      rawBody: false,
      bodyParser: false,
      globalPrefix: 'api',
      providers: PAYMENT_HANDLER_FIXTURES,
    });
    try {
      const event = createPaymentEvent('payment_intent.succeeded');
      expect(await post(`${prefixed.baseUrl}/api/${PATH}`, sign(event))).toEqual({
        status: 200,
        body: { received: true, outcome: 'handled' },
      });
    } finally {
      await prefixed.close();
    }
  });

  it('answers 413 from the declared Content-Length, before reading the body', async () => {
    const event = createPaymentEvent('payment_intent.succeeded', { metadata: { padding: 'x'.repeat(MAX_BODY_BYTES) } });
    expect(await post(url, sign(event))).toEqual({
      status: 413,
      body: { received: false, error: 'payload_too_large' },
    });
  });

  it('answers 413 on a chunked body (no Content-Length) once it passes maxBodyBytes', async () => {
    const signed = sign(
      createPaymentEvent('payment_intent.succeeded', { metadata: { padding: 'x'.repeat(MAX_BODY_BYTES) } }),
    );
    const bytes = Buffer.from(signed.rawBody);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 1024)
          controller.enqueue(bytes.subarray(offset, offset + 1024));
        controller.close();
      },
    });
    const before = app.app.get(FulfilmentHandler).calls.length;
    const response = await fetch(url, { method: 'POST', headers: signed.headers, body, duplex: 'half' } as RequestInit);
    expect(response.status).toBe(413);
    expect(app.app.get(FulfilmentHandler).calls).toHaveLength(before);
  });
});
