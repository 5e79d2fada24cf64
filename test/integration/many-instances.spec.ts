import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { createPaymentEvent } from '../../lib/testing/index.js';
import { RedisIdempotencyStore } from '../../lib/webhooks/stores/redis-idempotency.store.js';
import {
  HandlerScript,
  deliver,
  signedDelivery,
  startRedisWebhookApp,
  type RedisWebhookApp,
} from '../fixtures/redis/redis-webhook-app.fixture.js';
import {
  createRedis,
  createUnreachableRedis,
  deadPort,
  deleteKeys,
  quitAll,
  uniquePrefix,
  waitFor,
} from './redis-test.util.js';

/**
 * The "done when" of scale-out, inline processing: three instances of one app (three Nest apps on
 * their own ports, each with its own Redis client and RedisIdempotencyStore, same keyPrefix) behind
 * which the service delivers every event to all three at once.
 */
describe('three instances sharing a RedisIdempotencyStore (inline processing)', () => {
  const script = new HandlerScript();
  const clients: Redis[] = [];
  const apps: RedisWebhookApp[] = [];
  let prefix: string;
  let sideEffects: Redis;

  beforeAll(async () => {
    prefix = uniquePrefix('instances');
    sideEffects = createRedis();
    for (const instance of ['A', 'B', 'C']) {
      const client = createRedis();
      clients.push(client);
      apps.push(
        await startRedisWebhookApp({
          instance,
          script,
          store: new RedisIdempotencyStore(client, { keyPrefix: prefix }),
        }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await deleteKeys(sideEffects, prefix);
    await quitAll(sideEffects, ...clients);
  });

  it('[W4] runs each of 40 events exactly once when every event reaches all three instances at once', async () => {
    // The handler's own write (a counter in Redis) takes a round trip, so deliveries overlap.
    script.behaviour = async (run) => {
      await sideEffects.incr(`${prefix}side:${run.eventId}`);
    };
    const events = Array.from({ length: 40 }, () => createPaymentEvent('payment_intent.succeeded'));
    const statuses = new Map<string, number>();
    await Promise.all(
      // Each event goes to the three instances at once, starting with a different one each time.
      events.flatMap((event, n) =>
        [0, 1, 2].map(async (k) => {
          const i = (n + k) % 3;
          const { status } = await deliver(apps[i]!.webhookUrl, signedDelivery(event));
          statuses.set(`${event.id}:${i}`, status);
        }),
      ),
    );
    expect([...new Set(statuses.values())].every((s) => s === 200 || s === 409)).toBe(true);

    // The service redelivers what got 409 until it gets a 2xx: poll until every delivery is acknowledged.
    await waitFor(
      async () => {
        const pending = [...statuses].filter(([, status]) => status === 409);
        for (const [key] of pending) {
          const [eventId, index] = key.split(':') as [string, string];
          const event = events.find((e) => e.id === eventId)!;
          statuses.set(key, (await deliver(apps[Number(index)]!.webhookUrl, signedDelivery(event))).status);
        }
        return [...statuses.values()].every((status) => status === 200) ? true : undefined;
      },
      { what: 'every delivery to be acknowledged with 200' },
    );

    for (const event of events) {
      expect(script.runsOf(event.id)).toHaveLength(1);
      expect(await sideEffects.get(`${prefix}side:${event.id}`)).toBe('1');
    }
  });

  it('[W4] runs a handler that failed on instance A again when the event is redelivered to instance B, once', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    script.behaviour = (run) => {
      if (run.instance === 'A') throw new Error('warehouse API timed out');
    };
    expect((await deliver(apps[0]!.webhookUrl, signedDelivery(event))).status).toBe(500);
    expect(await deliver(apps[1]!.webhookUrl, signedDelivery(event))).toEqual({
      status: 200,
      body: { received: true, outcome: 'handled' },
    });
    expect(await deliver(apps[2]!.webhookUrl, signedDelivery(event))).toEqual({
      status: 200,
      body: { received: true, outcome: 'duplicate' },
    });
    expect(await deliver(apps[0]!.webhookUrl, signedDelivery(event))).toEqual({
      status: 200,
      body: { received: true, outcome: 'duplicate' },
    });
    expect(script.runsOf(event.id)).toEqual([
      { instance: 'A', eventId: event.id, deliveryAttempt: 1 },
      { instance: 'B', eventId: event.id, deliveryAttempt: 2 },
    ]);
  });

  it('[W4] answers 409 on another instance while one instance is running the handler, then 200 duplicate', async () => {
    const event = createPaymentEvent('payment_intent.succeeded');
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    script.behaviour = () => finished;
    const first = deliver(apps[0]!.webhookUrl, signedDelivery(event));
    await waitFor(() => (script.runsOf(event.id).length === 1 ? true : undefined), { what: 'A to start the handler' });
    expect((await deliver(apps[1]!.webhookUrl, signedDelivery(event))).status).toBe(409);
    finish();
    expect((await first).status).toBe(200);
    expect((await deliver(apps[1]!.webhookUrl, signedDelivery(event))).body.outcome).toBe('duplicate');
    expect(script.runsOf(event.id)).toHaveLength(1);
  });
});

describe('instances whose Redis is unreachable', () => {
  const script = new HandlerScript();
  const clients: Redis[] = [];
  const apps: RedisWebhookApp[] = [];

  beforeAll(async () => {
    const port = await deadPort();
    for (const instance of ['A', 'B', 'C']) {
      const client = createUnreachableRedis(port);
      clients.push(client);
      apps.push(
        await startRedisWebhookApp({
          instance,
          script,
          store: new RedisIdempotencyStore(client, { keyPrefix: uniquePrefix('dead') }),
        }),
      );
    }
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    clients.forEach((client) => client.disconnect());
  });

  it('[W4] answers 503 to every delivery and runs no handler', async () => {
    const events = Array.from({ length: 5 }, () => createPaymentEvent('payment_intent.succeeded'));
    const answers = await Promise.all(
      events.flatMap((event) => apps.map((app) => deliver(app.webhookUrl, signedDelivery(event)))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(15).fill(503));
    expect(script.runs).toEqual([]);
  });
});
