/**
 * Builds the baseline app: a bare Nest 12 route on the same adapter (`rawBody: true`) that verifies the
 * same HMAC with node:crypto (timingSafeEqual), parses the JSON and answers 200. The limit we measure
 * ourselves against. Shared by scenarios/baseline.server.js and callgrind.js. Options:
 * { adapter: 'express' | 'fastify', logger: levels or 'nest-default' (default BENCH_LOG_LEVELS) }.
 */
import 'reflect-metadata';
import { Controller, HttpCode, Module, Post, Req, UnauthorizedException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_LOG_LEVELS, WEBHOOK_PATH } from './bench-constants.js';
import { verifyAndParse } from './bare-hmac-route.js';
import { decorateClass, decorateMethod, decorateParameter } from './decorate.js';
import { handlerCounter } from './scenario-ipc.js';
import { nestLoggerOption } from './nest-logger-option.js';

export async function createBaselineApp({ adapter = 'express', logger = BENCH_LOG_LEVELS } = {}) {
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

  const httpAdapter =
    adapter === 'fastify' ? new (await import('@nestjs/platform-fastify')).FastifyAdapter() : undefined;
  const appOptions = { rawBody: true, ...nestLoggerOption(logger) };
  return httpAdapter
    ? NestFactory.create(BaselineModule, httpAdapter, appOptions)
    : NestFactory.create(BaselineModule, appOptions);
}
