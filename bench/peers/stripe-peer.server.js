/**
 * Peer scenario: @golevelup/nestjs-stripe on the Nest version it pulls in (11), Express, receiving
 * Stripe-signed payloads on its own controller (POST /stripe/webhook) and routing them to a no-op
 * `@StripeWebhookHandler('payment_intent.succeeded')`. The module dedupes nothing.
 * Resolves Nest, stripe and the module from bench/peers/node_modules.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { StripeModule, StripeWebhookHandler } from '@golevelup/nestjs-stripe';
import { BENCH_LOG_LEVELS, EVENT_TYPE, STRIPE_SECRET } from '../lib/bench-constants.js';
import { decorateClass, decorateMethod } from '../lib/decorate.js';
import { packageVersion } from '../lib/package-version.js';
import { handlerCounter, serveScenario } from '../lib/scenario-ipc.js';

class PaymentHandlers {
  onSucceeded() {
    handlerCounter.runs++;
  }
}
decorateMethod(PaymentHandlers, 'onSucceeded', StripeWebhookHandler(EVENT_TYPE));
decorateClass(PaymentHandlers, Injectable());

class PeerModule {}
decorateClass(
  PeerModule,
  Module({
    imports: [
      StripeModule.forRoot({
        apiKey: 'sk_test_bench_not_a_real_key',
        webhookConfig: { stripeSecrets: { accountTest: STRIPE_SECRET }, requestBodyProperty: 'rawBody' },
      }),
    ],
    providers: [PaymentHandlers],
  }),
);

const app = await NestFactory.create(PeerModule, { rawBody: true, logger: BENCH_LOG_LEVELS });
await app.listen(0, '127.0.0.1');

serveScenario({
  port: app.getHttpServer().address().port,
  nestVersion: packageVersion('@nestjs/core', import.meta.dirname),
  close: () => app.close(),
});
