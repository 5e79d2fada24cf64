import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { createServer } from 'node:net';
import {
  PaymentsModule,
  PaymentsService,
  standardWebhooksVerifier,
  type IdempotencyStore,
} from '../../../lib/index.js';
import { type PaymentsProcessingOptions } from '../../../lib/webhooks/index.js';
import type { AuditLogger } from '../support/audit.logger.js';
import type { SeededRandom } from '../support/seeded-random.js';
import { HandlerEffectsLedger } from './handler-effects.ledger.js';
import { MERCHANT_HANDLERS } from './merchant-payment.handlers.js';
import { MerchantOrdersRepository, type MerchantOrder } from './merchant-orders.repository.js';

/** The merchant app's API key at the simulator. */
export const CHAOS_API_KEY = 'sk_test_CHAOSCANARY_8d2f6a4c1e9b3570';

export interface MerchantAppSpec {
  adapter: 'express' | 'fastify';
  port: number;
  simulatorUrl: string;
  endpoint: { id: string; secret: string };
  store: IdempotencyStore;
  processing: PaymentsProcessingOptions;
  claimTtlSeconds: number;
  logger: AuditLogger;
  /** Draws the injected handler failures. */
  random: SeededRandom;
  failureRate: number;
}

export interface MerchantApp {
  app: INestApplication;
  orders: MerchantOrdersRepository;
  effects: HandlerEffectsLedger;
  /** Creates an order and its payment intent at the service; returns the order and the embed token. */
  createOrder(amount: number): Promise<{ order: MerchantOrder; embedToken: string }>;
  close(): Promise<void>;
}

/** A loopback port that was free a moment ago (the endpoint URL must be known before the app boots). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A merchant-like app: orders with conditional updates, four handlers (status, fulfilment, charge
 * reconciliation through the API client, ledger), PaymentsModule against the simulator with the
 * endpoint's secret, the given store and processing. Listens on 127.0.0.1:`port` (`rawBody: true`).
 */
export async function startMerchantApp(spec: MerchantAppSpec): Promise<MerchantApp> {
  const effects = new HandlerEffectsLedger(spec.random, spec.failureRate);

  @Module({
    imports: [
      PaymentsModule.forRoot({
        apiKey: CHAOS_API_KEY,
        environment: 'sandbox',
        baseUrl: spec.simulatorUrl,
        allowInsecureHttp: true,
        http: { maxRetries: 5, baseRetryDelayMs: 20, maxRetryDelayMs: 500 },
        webhooks: {
          verifier: standardWebhooksVerifier({ secrets: spec.endpoint.secret }),
          endpointIds: [spec.endpoint.id],
          store: spec.store,
          claimTtlSeconds: spec.claimTtlSeconds,
          processing: spec.processing,
        },
      }),
    ],
    providers: [MerchantOrdersRepository, { provide: HandlerEffectsLedger, useValue: effects }, ...MERCHANT_HANDLERS],
  })
  class ChaosMerchantAppModule {}

  const app = await NestFactory.create(
    ChaosMerchantAppModule,
    spec.adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
    {
      rawBody: true,
      logger: spec.logger,
      abortOnError: false,
    },
  );
  await app.listen(spec.port, '127.0.0.1');
  const orders = app.get(MerchantOrdersRepository);
  const payments = app.get(PaymentsService);
  return {
    app,
    orders,
    effects,
    async createOrder(amount) {
      const intent = await payments.paymentIntents.create({ amount, metadata: { shop: 'chaos' } });
      const embedToken = intent['embed_token'];
      if (typeof embedToken !== 'string') throw new Error('the created intent carries no embed token');
      return { order: orders.create(intent.id, amount), embedToken };
    },
    close: () => app.close(),
  };
}
