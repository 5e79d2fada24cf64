/**
 * Baseline scenario: a bare Nest 12 route on the same adapter (`rawBody: true`) that verifies the same
 * HMAC with node:crypto (timingSafeEqual), parses the JSON and answers 200. The limit we measure
 * ourselves against. Options (BENCH_SCENARIO_OPTIONS): { adapter: 'express' | 'fastify' }.
 */
import 'reflect-metadata';
import { packageVersion } from '../lib/package-version.js';
import { Controller, HttpCode, Module, Post, Req, UnauthorizedException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_LOG_LEVELS, WEBHOOK_PATH } from '../lib/bench-constants.js';
import { verifyAndParse } from '../lib/bare-hmac-route.js';
import { decorateClass, decorateMethod, decorateParameter } from '../lib/decorate.js';
import { handlerCounter, scenarioOptions, serveScenario } from '../lib/scenario-ipc.js';

const { adapter = 'express' } = scenarioOptions();

class BaselineWebhookController {
  handle(req) {
    const event = verifyAndParse(req.rawBody, req.headers);
    if (event === undefined) throw new UnauthorizedException();
    handlerCounter.runs++;
    return { received: true };
  }
}
decorateMethod(BaselineWebhookController, 'handle', Post(WEBHOOK_PATH), HttpCode(200));
decorateParameter(BaselineWebhookController, 'handle', 0, Req());
decorateClass(BaselineWebhookController, Controller());

class BaselineModule {}
decorateClass(BaselineModule, Module({ controllers: [BaselineWebhookController] }));

const httpAdapter = adapter === 'fastify' ? new (await import('@nestjs/platform-fastify')).FastifyAdapter() : undefined;
const app = httpAdapter
  ? await NestFactory.create(BaselineModule, httpAdapter, { rawBody: true, logger: BENCH_LOG_LEVELS })
  : await NestFactory.create(BaselineModule, { rawBody: true, logger: BENCH_LOG_LEVELS });
await app.listen(0, '127.0.0.1');

serveScenario({
  port: app.getHttpServer().address().port,
  nestVersion: packageVersion('@nestjs/core', import.meta.dirname),
  close: () => app.close(),
});
