/**
 * Builds the baseline app: a bare Nest 12 route on the same adapter (`rawBody: true`) that verifies the
 * same HMAC with node:crypto (timingSafeEqual), parses the JSON and answers 200. The limit we measure
 * ourselves against. Shared by scenarios/baseline.server.js and callgrind.js. Options:
 * { adapter: 'express' | 'fastify', logger: levels or 'nest-default' (default BENCH_LOG_LEVELS),
 *   reply: 'return' (default: returns its body, Nest's return-value path) | 'res' (issue 31: the cheapest
 *   bare route, written as ours is: `@Res()` and the framework's own reply, plus a `Map` dedupe of the
 *   event id, so it does all the work ours does for a delivery),
 *   inbox: true (with reply 'res', Express): the hand-written pg inbox of lib/hand-inbox.js instead of the
 *   Map (own database, statements counted: `baselineBenchHooks(app)` gives its report and cleanup) }.
 */
import 'reflect-metadata';
import { Controller, HttpCode, Module, Post, Req, Res, UnauthorizedException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BENCH_LOG_LEVELS, WEBHOOK_PATH } from './bench-constants.js';
import { verifyAndParse } from './bare-hmac-route.js';
import { decorateClass, decorateMethod, decorateParameter } from './decorate.js';
import { handlerCounter } from './scenario-ipc.js';
import { nestLoggerOption } from './nest-logger-option.js';
import { dedupe } from './plain-anchors.js';

/** The body ours answers a processed delivery with (one frozen object, as ours keeps one per outcome). */
const RECEIPT = Object.freeze({ received: true, outcome: 'processed' });
const DUPLICATE = Object.freeze({ received: true, outcome: 'duplicate' });

/** Per app: `extra` (statements per delivery) and `cleanups` of the inbox variant. */
const HOOKS = new WeakMap();
export function baselineBenchHooks(app) {
  return HOOKS.get(app) ?? { extra: undefined, cleanups: [] };
}

export async function createBaselineApp({
  adapter = 'express',
  logger = BENCH_LOG_LEVELS,
  reply = 'return',
  inbox = false,
  claim,
} = {}) {
  // claim: 'cluster' (with reply 'res'): the hand-written claim of lib/hand-claim.js on the Redis Cluster
  // at REDIS_CLUSTER_NODES instead of the Map.
  let claimAndRun;
  let claimCleanup;
  if (claim === 'cluster') {
    const { Cluster } = await import('ioredis');
    const { handClaim } = await import('./hand-claim.js');
    const nodes = (process.env.REDIS_CLUSTER_NODES ?? '127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103')
      .split(',')
      .map((node) => ({ host: node.split(':')[0], port: Number(node.split(':')[1]) }));
    const cluster = new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    const keyPrefix = `bench-hand-${process.pid}-${Date.now()}:`;
    claimAndRun = handClaim(cluster, keyPrefix);
    claimCleanup = async () => {
      for (const node of cluster.nodes('master')) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await node.unlink(...keys);
        } while (cursor !== '0');
      }
      cluster.disconnect();
    };
  }
  let pgBench;
  let handInbox;
  if (inbox) {
    const { createBenchDatabase, BENCH_LEDGER_SQL } = await import('./postgres-bench.js');
    const hand = await import('./hand-inbox.js');
    pgBench = await createBenchDatabase(`bench-hand-${process.pid}-${Date.now()}`);
    await pgBench.pool.query(BENCH_LEDGER_SQL);
    await pgBench.pool.query(hand.HAND_INBOX_SQL);
    handInbox = hand.handInbox;
  }
  class BaselineWebhookController {
    handle(req) {
      const event = verifyAndParse(req.rawBody, req.headers);
      if (event === undefined) throw new UnauthorizedException();
      handlerCounter.runs++;
      return { received: true };
    }
  }
  /** `@Res()`: the framework's own reply (Express `res.status().json()`, Fastify `reply.code().send()`). */
  class ResBaselineWebhookController {
    constructor() {
      this.fresh = dedupe();
    }
    handle(req, res) {
      const event = verifyAndParse(req.rawBody, req.headers);
      if (event === undefined) {
        if (adapter === 'fastify') res.code(401).send({ error: 'invalid_signature' });
        else res.status(401).json({ error: 'invalid_signature' });
        return;
      }
      if (claimAndRun) {
        claimAndRun(event.id, () => {
          handlerCounter.runs++;
        }).then(
          (status) =>
            status === 'busy'
              ? res.status(409).json({ received: true, outcome: 'busy' })
              : res.status(200).json(status === 'done' ? RECEIPT : DUPLICATE),
          () => res.status(503).json({ error: 'unavailable' }),
        );
        return;
      }
      if (handInbox) {
        handInbox(pgBench.pool, event.id).then(
          (fresh) => {
            if (fresh) {
              handlerCounter.runs++;
              pgBench.counts.deliveries++;
            }
            res.status(200).json(fresh ? RECEIPT : DUPLICATE);
          },
          () => res.status(503).json({ error: 'unavailable' }),
        );
        return;
      }
      const fresh = this.fresh(event.id);
      if (fresh) handlerCounter.runs++;
      if (adapter === 'fastify') res.code(200).send(fresh ? RECEIPT : DUPLICATE);
      else res.status(200).json(fresh ? RECEIPT : DUPLICATE);
    }
  }
  const Controller_ = reply === 'res' ? ResBaselineWebhookController : BaselineWebhookController;
  decorateMethod(Controller_, 'handle', Post(WEBHOOK_PATH), HttpCode(200));
  decorateParameter(Controller_, 'handle', 0, Req());
  if (reply === 'res') decorateParameter(Controller_, 'handle', 1, Res());
  decorateClass(Controller_, Controller());

  class BaselineModule {}
  decorateClass(BaselineModule, Module({ controllers: [Controller_] }));

  const httpAdapter =
    adapter === 'fastify' ? new (await import('@nestjs/platform-fastify')).FastifyAdapter() : undefined;
  const appOptions = { rawBody: true, ...nestLoggerOption(logger) };
  const app = await (httpAdapter
    ? NestFactory.create(BaselineModule, httpAdapter, appOptions)
    : NestFactory.create(BaselineModule, appOptions));
  if (pgBench) HOOKS.set(app, { extra: pgBench.extra, cleanups: [() => pgBench.drop()] });
  if (claimCleanup) HOOKS.set(app, { extra: undefined, cleanups: [claimCleanup] });
  return app;
}
