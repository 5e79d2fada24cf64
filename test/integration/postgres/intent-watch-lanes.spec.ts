import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PostgresIntentWatchStore } from '../../../lib/webhooks/index.js';
import { itKeepsTheDueLanes } from '../../fixtures/webhooks/intent-watch-lanes.contract.js';
import { createTestDatabase, type TestDatabase } from './postgres-test.util.js';

/*
 * The PostgreSQL watch list's lanes (issue 31, item 4), kept in the records: never-checked intents read
 * first through a partial index by instance and next check.
 */
describe('PostgresIntentWatchStore lanes', () => {
  let db: TestDatabase;
  let tables = 0;
  beforeAll(async () => {
    db = await createTestDatabase('watch_lanes');
  });
  afterAll(async () => db.drop());

  itKeepsTheDueLanes(() => new PostgresIntentWatchStore(db.pool, { table: `lanes_${tables++}` }));

  it('reads the never-checked lane of an instance through its partial index, not a scan of the backlog', async () => {
    const table = 'planned';
    const list = new PostgresIntentWatchStore(db.pool, { table });
    await list.due(0, 1); // creates the schema
    await db.pool.query(
      `INSERT INTO ${table} (key, expires_at, watch_scope, watch_kind, watch_created_ms, watch_next_ms, watch_checks, watch_until)
       SELECT 'i:old-' || n, now() + interval '1 day', '', 'payment_intent', 0, n, 3, now() + interval '1 day' FROM generate_series(1, 20000) n`,
    );
    await db.pool.query(`ANALYZE ${table}`);
    const { rows } = await db.pool.query(
      `EXPLAIN SELECT * FROM ${table} WHERE watch_scope = '' AND watch_checks = 0 AND watch_next_ms <= 30000 ORDER BY watch_next_ms LIMIT 100`,
    );
    expect(rows.map((row) => String(row['QUERY PLAN'])).join('\n')).toMatch(/Index Scan using planned_watch_fresh_idx/);
  });
});
