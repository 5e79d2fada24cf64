/**
 * Baseline of the peer: a bare route on the same Nest version as the peer (11, from
 * bench/peers/node_modules), Express, `rawBody: true`, verifying the same Stripe signature by hand
 * (node:crypto, timingSafeEqual), parsing the JSON and answering 200 on POST /stripe/webhook with an
 * empty body, as the peer's controller does (it returns nothing: 201, empty), so that the two differ
 * only by what the module does.
 */
import 'reflect-metadata';
import { Controller, Headers, HttpCode, Module, Post, Req, UnauthorizedException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_LOG_LEVELS, STRIPE_PATH } from '../lib/bench-constants.js';
import { verifyStripeAndParse } from '../lib/bare-stripe-route.js';
import { decorateClass, decorateMethod, decorateParameter } from '../lib/decorate.js';
import { packageVersion } from '../lib/package-version.js';
import { handlerCounter, serveScenario } from '../lib/scenario-ipc.js';

class BareStripeController {
  handle(req, signature) {
    const event = verifyStripeAndParse(req.rawBody, signature);
    if (event === undefined) throw new UnauthorizedException();
    handlerCounter.runs++;
  }
}
decorateMethod(BareStripeController, 'handle', Post(STRIPE_PATH), HttpCode(200));
decorateParameter(BareStripeController, 'handle', 0, Req());
decorateParameter(BareStripeController, 'handle', 1, Headers('stripe-signature'));
decorateClass(BareStripeController, Controller());

class BareModule {}
decorateClass(BareModule, Module({ controllers: [BareStripeController] }));

const app = await NestFactory.create(BareModule, { rawBody: true, logger: BENCH_LOG_LEVELS });
await app.listen(0, '127.0.0.1');

serveScenario({
  port: app.getHttpServer().address().port,
  nestVersion: packageVersion('@nestjs/core', import.meta.dirname),
  close: () => app.close(),
});
