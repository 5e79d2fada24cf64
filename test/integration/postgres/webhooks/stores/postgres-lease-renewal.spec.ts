import { afterAll, beforeAll, describe } from '@jest/globals';
import { PostgresIdempotencyStore } from '../../../../../lib/index.js';
import { describeLeaseRenewal } from '../../../../fixtures/webhooks/lease-renewal.scenario.js';
import { createTestDatabase, type TestDatabase } from '../../postgres-test.util.js';

describe('PostgresIdempotencyStore (real PostgreSQL)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('lease');
  });
  afterAll(async () => {
    await db.drop();
  });
  describeLeaseRenewal('PostgreSQL', {
    store: () => new PostgresIdempotencyStore(db.pool, { table: 'idem_lease' }),
    forget: async (_store, key) => {
      await db.pool.query('DELETE FROM idem_lease WHERE key = $1', [key]);
    },
  });
});
