import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PostgresIntentWatchStore } from '../../../lib/webhooks/index.js';
import { itKeepsTheDueLanes } from '../../fixtures/webhooks/intent-watch-lanes.contract.js';
import { createTestDatabase, type TestDatabase } from './postgres-test.util.js';

/*
 * The PostgreSQL watch list's lanes (issue 31, item 4): never-checked intents read first through a
 * partial index; a table made by an earlier release gets the index on first use and reads as before.
 */
describe('PostgresIntentWatchStore lanes', () => {
  let db: TestDatabase;
  let tables = 0;
  beforeAll(async () => {
    db = await createTestDatabase('watch_lanes');
  });
  afterAll(async () => db.drop());

  itKeepsTheDueLanes(() => new PostgresIntentWatchStore(db.pool, { table: `lanes_${tables++}` }));

  it('adds the partial index to a table of an earlier release and reads its rows, never-checked first', async () => {
    // The schema before the lanes: the table, its next_check_ms index and the lease table.
    await db.pool.query(`CREATE TABLE earlier (id text PRIMARY KEY, kind text NOT NULL, created_at_ms bigint NOT NULL,
      next_check_ms bigint NOT NULL, checks integer NOT NULL DEFAULT 0);
      CREATE INDEX earlier_due ON earlier (next_check_ms);
      CREATE TABLE earlier_lease (name text PRIMARY KEY, owner text NOT NULL, until timestamptz NOT NULL)`);
    const [checked, fresh] = [randomUUID(), randomUUID()];
    await db.pool.query(`INSERT INTO earlier VALUES ($1, 'payment_intent', 1, 10, 4), ($2, 'setup_intent', 2, 90, 0)`, [
      checked,
      fresh,
    ]);
    const list = new PostgresIntentWatchStore(db.pool, { table: 'earlier' });
    expect(await list.due(100, 10)).toEqual([
      { kind: 'setup_intent', id: fresh, createdAt: 2, nextCheckAt: 90, checks: 0 },
      { kind: 'payment_intent', id: checked, createdAt: 1, nextCheckAt: 10, checks: 4 },
    ]);
    const { rows } = await db.pool.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'earlier_fresh'`);
    expect(String(rows[0]?.['indexdef'])).toMatch(/WHERE \(checks = 0\)/);
  });

  it('reads the never-checked lane through its partial index, not a scan of the backlog', async () => {
    const table = 'planned';
    const list = new PostgresIntentWatchStore(db.pool, { table });
    await list.due(0, 1); // creates the table
    await db.pool.query(
      `INSERT INTO ${table} SELECT 'old-' || n, 'payment_intent', 0, n, 3 FROM generate_series(1, 20000) n`,
    );
    await db.pool.query(`ANALYZE ${table}`);
    const { rows } = await db.pool.query(
      `EXPLAIN SELECT * FROM ${table} WHERE checks = 0 AND next_check_ms <= 30000 ORDER BY next_check_ms LIMIT 100`,
    );
    expect(rows.map((row) => String(row['QUERY PLAN'])).join('\n')).toMatch(/Index Scan using planned_fresh/);
  });
});
