import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Module, RequestMethod, VersioningType, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { PaymentsModule, standardWebhooksVerifier } from '../../../lib/index.js';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { post, type AdapterName } from '../../fixtures/webhooks/webhook-app.fixture.js';

const SECRET = `whsec_${Buffer.from('global-prefix-secret-32-bytes!!!').toString('base64')}`;

@Module({
  imports: [
    PaymentsModule.forRoot({
      apiKey: 'sk_test_global_prefix',
      environment: 'sandbox',
      baseUrl: 'https://sandbox.payments.test',
      webhooks: { verifier: standardWebhooksVerifier({ secrets: SECRET }) },
    }),
  ],
})
class PrefixedAppModule {}

describe.each(['express', 'fastify'] as const)('global prefix and versioning on %s', (adapterName: AdapterName) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const start = async (
    configure: (app: INestApplication) => void,
  ): Promise<{ base: string; logger: CapturingLogger }> => {
    const logger = new CapturingLogger();
    const adapter = adapterName === 'express' ? new ExpressAdapter() : new FastifyAdapter();
    app = await NestFactory.create(PrefixedAppModule, adapter, { rawBody: true, logger, abortOnError: false });
    configure(app);
    await app.listen(0, '127.0.0.1');
    return { base: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`, logger };
  };
  const deliver = (url: string) =>
    post(
      url,
      signWebhook(createPaymentEvent('payment_intent.succeeded'), { scheme: 'standard-webhooks', secret: SECRET }),
    );

  it('logs the route Nest maps under setGlobalPrefix, and serves it there', async () => {
    const { base, logger } = await start((nest) => nest.setGlobalPrefix('api'));
    expect(logger.messages('log')).toContain('Receiving webhooks at POST /api/payments/webhooks');
    expect((await deliver(`${base}/api/payments/webhooks`)).status).toBe(200);
    expect((await deliver(`${base}/payments/webhooks`)).status).toBe(404);
  });

  it('logs the unprefixed route when the prefix excludes it', async () => {
    const { base, logger } = await start((nest) =>
      nest.setGlobalPrefix('api', { exclude: [{ path: 'payments/webhooks', method: RequestMethod.POST }] }),
    );
    expect(logger.messages('log')).toContain('Receiving webhooks at POST /payments/webhooks');
    expect((await deliver(`${base}/payments/webhooks`)).status).toBe(200);
  });

  it('is version-neutral: URI versioning with a default version leaves the configured URL as it is', async () => {
    const { base, logger } = await start((nest) =>
      nest.setGlobalPrefix('api').enableVersioning({ type: VersioningType.URI, defaultVersion: '1' }),
    );
    expect(logger.messages('log')).toContain('Receiving webhooks at POST /api/payments/webhooks');
    expect((await deliver(`${base}/api/payments/webhooks`)).status).toBe(200);
    expect((await deliver(`${base}/api/v1/payments/webhooks`)).status).toBe(404);
  });
});
