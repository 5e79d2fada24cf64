import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { PaymentsModule, RedisIdempotencyStore } from '../../../lib/index.js';
import { getHealth, startHealthApp, type HealthApp } from '../../fixtures/health/health-app.fixture.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../fixtures/webhooks/webhook-app.fixture.js';
import { deadPort, uniqueQueueName, waitFor } from '../redis-test.util.js';

/**
 * A redis-server of this suite alone, on a spare port, that the test stops and starts again (the
 * shared Redis on 6379 is never touched). In memory only: nothing is left on disk.
 */
class DedicatedRedis {
  #process: ChildProcess | undefined;
  constructor(readonly port: number) {}

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.#process = child;
    const probe = new Redis({
      port: this.port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    });
    try {
      await waitFor(
        async () => {
          try {
            if (probe.status !== 'ready') await probe.connect();
            return (await probe.ping()) === 'PONG' ? true : undefined;
          } catch {
            probe.disconnect();
            return undefined;
          }
        },
        { timeoutMs: 10_000, what: `redis-server on port ${this.port}` },
      );
    } finally {
      probe.disconnect();
    }
  }

  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}

describe('PaymentsHealthIndicator against a Redis that goes away and comes back', () => {
  const logger = new CapturingLogger();
  let redis: DedicatedRedis;
  let storeClient: Redis;
  let health: HealthApp;

  beforeAll(async () => {
    redis = new DedicatedRedis(await deadPort());
    await redis.start();
    // The app's own client, as an app creates it (offline queue on, reconnecting forever).
    storeClient = new Redis({ port: redis.port, host: '127.0.0.1' });
    storeClient.on('error', () => undefined);
    const store = new RedisIdempotencyStore(storeClient, { keyPrefix: 'health-test:' });
    const queue = { connection: { host: '127.0.0.1', port: redis.port }, name: uniqueQueueName('health') };
    health = await startHealthApp(
      PaymentsModule.forRoot(fixtureOptions({ requireHttps: false, store, processing: { queue } })),
      'express',
      logger,
    );
  });
  afterAll(async () => {
    await health?.close();
    storeClient?.disconnect();
    await redis?.stop();
  });

  it('is healthy, then unhealthy (503) while Redis is stopped, then healthy again once it is back', async () => {
    const up = await getHealth(health.baseUrl);
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({
      status: 'ok',
      info: {
        payments: {
          status: 'up',
          store: { status: 'up', store: 'RedisIdempotencyStore' },
          queue: { status: 'up', mode: 'queue', failed: 0, worker: 'running' },
        },
      },
    });

    await redis.stop();
    const down = await waitFor(
      async () => {
        const answer = await getHealth(health.baseUrl);
        return answer.status === 503 ? answer : undefined;
      },
      { timeoutMs: 15_000, what: 'the health check to see Redis down' },
    );
    expect(down.body).toMatchObject({
      status: 'error',
      error: { payments: { status: 'down', store: { status: 'down' }, queue: { status: 'down' } } },
    });
    if (process.env.PRINT_HEALTH) process.stdout.write(`${JSON.stringify(down.body)}\n`);
    // Only reason codes: no address, port or message text.
    expect(JSON.stringify(down.body)).not.toContain(String(redis.port));

    await redis.start();
    const back = await waitFor(
      async () => {
        const answer = await getHealth(health.baseUrl);
        return answer.status === 200 ? answer : undefined;
      },
      { timeoutMs: 15_000, what: 'the health check to see Redis back' },
    );
    expect(back.body).toMatchObject({
      status: 'ok',
      info: { payments: { status: 'up', store: { status: 'up' }, queue: { status: 'up' } } },
    });
  });
});
