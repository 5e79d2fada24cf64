import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { PaymentsConfigurationError, PaymentsModule, standardWebhooksVerifier } from '../../../lib/index.js';
import type { AdapterName } from '../../fixtures/webhooks/webhook-app.fixture.js';

const SECRET = `whsec_${Buffer.from('route-letter-case-secret-32-byte').toString('base64')}`;
const account = (apiKey: string) => ({
  apiKey,
  environment: 'sandbox' as const,
  baseUrl: 'https://sandbox.payments.test',
  webhooks: { verifier: standardWebhooksVerifier({ secrets: SECRET }) },
});

// Express would serve both routes with the first one registered (case-insensitive matching), so the
// second account's deliveries would reach the first account's checks and handlers.
describe.each(['express', 'fastify'] as const)(
  'routes that differ only in letter case on %s',
  (adapterName: AdapterName) => {
    it('refuse to boot, naming both instances and webhooks.path', async () => {
      @Module({
        imports: [
          PaymentsModule.forRoot({
            ...account('sk_test_a'),
            webhooks: { ...account('').webhooks, path: 'payments/webhooks' },
          }),
          PaymentsModule.forRoot({
            name: 'eu',
            ...account('sk_test_b'),
            webhooks: { ...account('').webhooks, path: 'Payments/Webhooks' },
          }),
        ],
      })
      class CaseCollisionAppModule {}

      const adapter = adapterName === 'express' ? new ExpressAdapter() : new FastifyAdapter();
      const app = await NestFactory.create(CaseCollisionAppModule, adapter, {
        rawBody: true,
        logger: false,
        abortOnError: false,
      });
      const error = await app.init().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      await app.close().catch(() => undefined);
      expect(error).toBeInstanceOf(PaymentsConfigurationError);
      expect((error as PaymentsConfigurationError).option).toBe('webhooks.path');
      expect((error as Error).message).toContain("(instance 'eu')");
      expect((error as Error).message).toContain("(instance 'default')");
      expect((error as Error).message).toContain('letter case');
    });
  },
);
