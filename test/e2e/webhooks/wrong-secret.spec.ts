import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { PaymentsModule, standardWebhooksVerifier } from '../../../lib/index.js';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { post, type AdapterName } from '../../fixtures/webhooks/webhook-app.fixture.js';

const CONFIGURED = `whsec_${Buffer.from('configured-but-wrong-secret-32by').toString('base64')}`;
const ENDPOINTS = `whsec_${Buffer.from('the-endpoints-real-secret-32byte').toString('base64')}`;

@Module({
  imports: [
    PaymentsModule.forRoot({
      apiKey: 'sk_test_wrong_secret',
      environment: 'sandbox',
      baseUrl: 'https://sandbox.payments.test',
      webhooks: { verifier: standardWebhooksVerifier({ secrets: CONFIGURED }) },
    }),
  ],
})
class WrongSecretAppModule {}

describe.each(['express', 'fastify'] as const)('a wrong webhook secret on %s', (adapterName: AdapterName) => {
  const logger = new CapturingLogger();
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const adapter = adapterName === 'express' ? new ExpressAdapter() : new FastifyAdapter();
    app = await NestFactory.create(WrongSecretAppModule, adapter, { rawBody: true, logger, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/payments/webhooks`;
  });
  afterAll(async () => {
    await app?.close();
  });

  const deliver = (secret: string) =>
    post(url, signWebhook(createPaymentEvent('payment_intent.succeeded'), { scheme: 'standard-webhooks', secret }));
  const hints = () => logger.messages('warn').filter((line) => line.includes('secret probably is not'));

  it('says once that the secret probably does not match, naming the option and env var, never a secret', async () => {
    for (let i = 0; i < 4; i++) expect((await deliver(ENDPOINTS)).status).toBe(401);
    expect(hints()).toHaveLength(0);
    expect((await deliver(ENDPOINTS)).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await deliver(ENDPOINTS)).status).toBe(401);
    expect(hints()).toHaveLength(1);
    expect(hints()[0]).toContain('/payments/webhooks');
    expect(hints()[0]).toContain('webhooks.verifier');
    expect(hints()[0]).toContain('PAYMENTS_WEBHOOK_SECRET');
    const everything = logger.lines.map((line) => line.message).join('\n');
    for (const secret of [CONFIGURED, ENDPOINTS]) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice('whsec_'.length));
    }
  });
});
