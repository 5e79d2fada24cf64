import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { standardWebhooks } from '../../../lib/index.js';
import {
  createPaymentsForwarder,
  PaymentsForwarderModule,
  type PaymentsDeliveryPublisher,
  type PaymentsForwardedDelivery,
} from '../../../lib/serverless/index.js';
import { createPaymentEvent } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { CURRENT_SECRET, post, sign, startWebhookApp } from '../../fixtures/webhooks/webhook-app.fixture.js';

/**
 * The forwarder's own logic (size, signature at the edge, the 2xx only after the publisher resolved), with a
 * publisher that records what it was given: the real brokers' publishers are proven in `npm run test:brokers`.
 */
function recordingPublisher(fail = false): PaymentsDeliveryPublisher & { published: PaymentsForwardedDelivery[] } {
  const published: PaymentsForwardedDelivery[] = [];
  return {
    published,
    publish: async (delivery) => {
      if (fail) throw new Error('connection refused');
      published.push(delivery);
    },
  };
}

const verifier = standardWebhooks({ secrets: CURRENT_SECRET });
const logger = new CapturingLogger();
beforeAll(() => Logger.overrideLogger(logger));
afterAll(() => Logger.overrideLogger(new CapturingLogger()));

describe('createPaymentsForwarder (the edge, as a function handler)', () => {
  it('publishes the bytes exactly and the headers as sent (hop-by-hop ones left out), then answers 200 forwarded', async () => {
    const publisher = recordingPublisher();
    const forward = createPaymentsForwarder({ publisher, verifier });
    const signed = sign(createPaymentEvent('payment_intent.succeeded'));

    const answer = await forward({
      body: Buffer.from(signed.rawBody).toString('base64'),
      isBase64Encoded: true,
      headers: { ...signed.headers, Host: 'edge.example', Connection: 'keep-alive', 'Content-Length': '123' },
    });

    expect(answer).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ received: true, outcome: 'forwarded' }),
    });
    expect(publisher.published).toHaveLength(1);
    expect(publisher.published[0]!.body.equals(Buffer.from(signed.rawBody))).toBe(true);
    expect(publisher.published[0]!.headers).toEqual(signed.headers);
  });

  it('[W1] refuses a forged or stale delivery 401 at the edge, and a body over maxBodyBytes 413, publishing neither', async () => {
    const publisher = recordingPublisher();
    const forward = createPaymentsForwarder({ publisher, verifier, maxBodyBytes: 2048 });
    const event = createPaymentEvent('payment_intent.succeeded');
    const stale = sign(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    const big = sign(JSON.stringify({ ...event, padding: 'x'.repeat(4096) }));

    const forged = await forward({
      body: stale.rawBody,
      headers: { ...stale.headers, 'webhook-signature': 'v1,AAAA' },
    });
    const old = await forward({ body: stale.rawBody, headers: stale.headers });
    const tooBig = await forward({ body: big.rawBody, headers: big.headers });

    expect([forged.statusCode, old.statusCode, tooBig.statusCode]).toEqual([401, 401, 413]);
    expect(JSON.parse(tooBig.body)).toEqual({ received: false, error: 'payload_too_large' });
    expect(publisher.published).toEqual([]);
  });

  it('answers 503 when the broker did not confirm (the service retries), with one error line that names no secret', async () => {
    const lines: string[] = [];
    const forward = createPaymentsForwarder({
      publisher: recordingPublisher(true),
      logger: { error: (line) => lines.push(line) },
    });
    const signed = sign(createPaymentEvent('payment_intent.succeeded'));

    const answer = await forward({ body: signed.rawBody, headers: signed.headers });

    expect(answer.statusCode).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({ received: false, error: 'broker_unavailable' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(CURRENT_SECRET);
  });

  it('fails at boot, naming the option, without a publisher', () => {
    expect(() => createPaymentsForwarder({} as never)).toThrow(/createPaymentsForwarder\(\{ publisher \}\)/);
  });
});

describe.each(['express', 'fastify'] as const)(
  'PaymentsForwarderModule (the edge, as a Nest route) on %s',
  (adapter) => {
    it('publishes the raw bytes of POST /payments/webhooks and answers 200 once published, 401 for a forged one', async () => {
      const publisher = recordingPublisher();
      const app = await startWebhookApp({
        adapter,
        logger,
        payments: PaymentsForwarderModule.register({ publisher, verifier }),
      });
      try {
        const signed = sign(createPaymentEvent('payment_intent.succeeded'));
        const ok = await post(`${app.baseUrl}/payments/webhooks`, signed);
        const forged = await post(`${app.baseUrl}/payments/webhooks`, {
          ...signed,
          headers: { ...signed.headers, 'webhook-signature': 'v1,AAAA' },
        });

        expect({ status: ok.status, body: ok.body }).toEqual({
          status: 200,
          body: { received: true, outcome: 'forwarded' },
        });
        expect(forged.status).toBe(401);
        expect(publisher.published).toHaveLength(1);
        expect(publisher.published[0]!.body.toString()).toBe(signed.rawBody);
      } finally {
        await app.close();
      }
    });
  },
);
