import { STRIPE_PATH, WEBHOOK_PATH } from './bench-constants.js';

const bench = new URL('..', import.meta.url).pathname;

/**
 * The HTTP scenarios, each served by its own child process. `payload` says which signed deliveries
 * it receives; `group` marks the peer pair (allowed to be unavailable); `needsRedis` the ones that
 * need Redis at 127.0.0.1:6379; `runsHandler` the ones whose no-op handler must run once per 2xx;
 * `fullOnly` the ones a `--quick` run (CI) skips, to keep it near a minute (same app as another, other log levels).
 */
export const SCENARIOS = [
  {
    id: 'baseline-express',
    title: 'bare Nest route, Express (HMAC by hand + JSON.parse)',
    file: `${bench}scenarios/baseline.server.js`,
    options: { adapter: 'express' },
    payload: 'ours',
    path: WEBHOOK_PATH,
    runsHandler: true,
  },
  {
    id: 'baseline-fastify',
    title: 'bare Nest route, Fastify (HMAC by hand + JSON.parse)',
    file: `${bench}scenarios/baseline.server.js`,
    options: { adapter: 'fastify' },
    payload: 'ours',
    path: WEBHOOK_PATH,
    runsHandler: true,
  },
  {
    id: 'ours-express',
    title: 'nestjs-payments, Express, inline, memory store',
    file: `${bench}scenarios/ours.server.js`,
    options: { adapter: 'express', store: 'memory', processing: 'inline' },
    payload: 'ours',
    path: WEBHOOK_PATH,
    runsHandler: true,
  },
  {
    id: 'ours-fastify',
    title: 'nestjs-payments, Fastify, inline, memory store',
    file: `${bench}scenarios/ours.server.js`,
    options: { adapter: 'fastify', store: 'memory', processing: 'inline' },
    payload: 'ours',
    path: WEBHOOK_PATH,
    runsHandler: true,
  },
  {
    id: 'ours-express-default-logs',
    title: "nestjs-payments, Express, inline, memory store, Nest's default logger (every level)",
    file: `${bench}scenarios/ours.server.js`,
    options: { adapter: 'express', store: 'memory', processing: 'inline', logger: 'nest-default' },
    fullOnly: true,
    payload: 'ours',
    path: WEBHOOK_PATH,
    runsHandler: true,
  },
  {
    id: 'ours-fastify-default-logs',
    title: "nestjs-payments, Fastify, inline, memory store, Nest's default logger (every level)",
    file: `${bench}scenarios/ours.server.js`,
    options: { adapter: 'fastify', store: 'memory', processing: 'inline', logger: 'nest-default' },
    fullOnly: true,
    payload: 'ours',
    path: WEBHOOK_PATH,
    runsHandler: true,
  },
  {
    id: 'ours-express-redis',
    title: 'nestjs-payments, Express, inline, RedisIdempotencyStore',
    file: `${bench}scenarios/ours.server.js`,
    options: { adapter: 'express', store: 'redis', processing: 'inline' },
    payload: 'ours',
    path: WEBHOOK_PATH,
    needsRedis: true,
    runsHandler: true,
  },
  {
    id: 'ours-express-queued',
    title: 'nestjs-payments, Express, queued (BullMQ, acknowledgement only)',
    file: `${bench}scenarios/ours.server.js`,
    options: { adapter: 'express', store: 'memory', processing: 'queued' },
    payload: 'ours',
    path: WEBHOOK_PATH,
    needsRedis: true,
    runsHandler: false,
  },
  {
    id: 'peer-baseline',
    title: 'bare Nest route on the peer\'s Nest, Express (Stripe signature by hand + JSON.parse)',
    file: `${bench}peers/bare-route.server.js`,
    options: {},
    payload: 'stripe',
    path: STRIPE_PATH,
    group: 'peer',
    runsHandler: true,
  },
  {
    id: 'peer-golevelup-stripe',
    title: '@golevelup/nestjs-stripe, Express (Stripe-signed, no dedupe)',
    file: `${bench}peers/stripe-peer.server.js`,
    options: {},
    payload: 'stripe',
    path: STRIPE_PATH,
    group: 'peer',
    runsHandler: true,
  },
];
