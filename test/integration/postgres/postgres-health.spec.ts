import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { PaymentsModule, PostgresIdempotencyStore } from '../../../lib/index.js';
import { getHealth, startHealthApp, type HealthApp } from '../../fixtures/health/health-app.fixture.js';
import { CapturingLogger } from '../../fixtures/webhooks/capturing.logger.js';
import { fixtureOptions } from '../../fixtures/webhooks/webhook-app.fixture.js';
import { createTestDatabase, createUnreachablePool, deadPort, type TestDatabase } from './postgres-test.util.js';

/** `PaymentsHealthIndicator` (nestjs-payments/health) with a `PostgresIdempotencyStore`: its `ping()` decides the store's status. */
describe('PaymentsHealthIndicator with PostgresIdempotencyStore (real PostgreSQL)', () => {
  let db: TestDatabase;
  const apps: HealthApp[] = [];

  const start = async (store: PostgresIdempotencyStore): Promise<HealthApp> => {
    const app = await startHealthApp(
      PaymentsModule.forRoot(fixtureOptions({ requireHttps: false, store })),
      'express',
      new CapturingLogger(),
    );
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    db = await createTestDatabase('health');
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('reports the store up (200) when PostgreSQL answers', async () => {
    const app = await start(new PostgresIdempotencyStore(db.pool));
    const answer = await getHealth(app.baseUrl);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      info: { payments: { status: 'up', store: { status: 'up', store: 'PostgresIdempotencyStore' } } },
    });
  });

  it('reports the store down (503) when its pool points at a dead port, naming no address', async () => {
    const port = await deadPort();
    const pool = createUnreachablePool(port);
    try {
      const app = await start(new PostgresIdempotencyStore(pool));
      const answer = await getHealth(app.baseUrl);
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({
        error: { payments: { status: 'down', store: { status: 'down', store: 'PostgresIdempotencyStore' } } },
      });
      expect(JSON.stringify(answer.body)).not.toContain(String(port));
    } finally {
      await pool.end().catch(() => undefined);
    }
  });
});
