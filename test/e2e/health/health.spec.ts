import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PaymentsModule, type IdempotencyStore } from '../../../lib/index.js';
import { getHealth, startHealthApp, type HealthApp } from '../../fixtures/health/health-app.fixture.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../fixtures/webhooks/webhook-app.fixture.js';

/** A store whose engine is whatever the test says: answers, refuses, or never answers. */
class PingableStore implements IdempotencyStore {
  mode: 'up' | 'refused' | 'hung' = 'up';
  async claim(): Promise<never> {
    throw new Error('not used');
  }
  async complete(): Promise<void> {}
  async release(): Promise<void> {}
  ping(): Promise<void> {
    if (this.mode === 'up') return Promise.resolve();
    if (this.mode === 'hung') return new Promise<void>(() => undefined);
    return Promise.reject(
      Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:6379 password=hunter2'), { code: 'ECONNREFUSED' }),
    );
  }
}

describe.each(['express', 'fastify'] as const)(
  'PaymentsHealthIndicator in a terminus HealthController on %s (inline processing)',
  (adapter) => {
    describe('with the default in-memory store', () => {
      let health: HealthApp;
      beforeAll(async () => {
        health = await startHealthApp(
          PaymentsModule.forRoot(fixtureOptions({ requireHttps: false })),
          adapter,
          new CapturingLogger(),
        );
      });
      afterAll(async () => {
        await health.close();
      });

      it('is up: an in-process store and no queue have nothing that can be down', async () => {
        const { status, body } = await getHealth(health.baseUrl);
        expect(status).toBe(200);
        expect(body).toMatchObject({
          status: 'ok',
          info: {
            payments: {
              status: 'up',
              store: { status: 'up', store: 'MemoryIdempotencyStore' },
              queue: { status: 'up', mode: 'inline' },
            },
          },
        });
      });
    });

    describe('with a store that has a ping()', () => {
      const store = new PingableStore();
      let health: HealthApp;
      beforeAll(async () => {
        health = await startHealthApp(
          PaymentsModule.forRoot(fixtureOptions({ requireHttps: false, store })),
          adapter,
          new CapturingLogger(),
        );
      });
      afterAll(async () => {
        await health.close();
      });

      it('answers 503 naming the error class and code (never its message) when the store refuses, and 200 again when it is back', async () => {
        store.mode = 'refused';
        const down = await getHealth(health.baseUrl);
        expect(down.status).toBe(503);
        expect(down.body).toMatchObject({
          status: 'error',
          error: {
            payments: {
              status: 'down',
              store: { status: 'down', store: 'PingableStore', error: 'Error ECONNREFUSED' },
            },
          },
        });
        expect(JSON.stringify(down.body)).not.toMatch(/hunter2|10\.1\.2\.3/);
        store.mode = 'up';
        expect((await getHealth(health.baseUrl)).status).toBe(200);
      });

      it('counts a store that does not answer within timeoutMs as down (timeout)', async () => {
        store.mode = 'hung';
        const down = await getHealth(health.baseUrl);
        expect(down.status).toBe(503);
        expect(down.body).toMatchObject({ error: { payments: { store: { status: 'down', error: 'timeout' } } } });
        store.mode = 'up';
      });
    });
  },
);
