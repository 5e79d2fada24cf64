import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PostgresIdempotencyStore } from '../../../lib/index.js';
import { intentWatchTable } from '../../../lib/webhooks/stores/postgres-intent-watch.store.js';
import { createTestDatabase, type TestDatabase } from './postgres-test.util.js';

/*
 * Two processes (two pools, two stores) on one table (issue 29, defects 4 and 1): grouped claims and
 * grouped completions of the same keys never deadlock, and named instances never share a watch list.
 */
const shuffled = <T>(items: T[], seed: number): T[] => {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};

const ROUNDS = 60;
const KEYS = 40;

describe('PostgresIdempotencyStore from two pools', () => {
  let db: TestDatabase;
  let a: PostgresIdempotencyStore;
  let b: PostgresIdempotencyStore;
  beforeAll(async () => {
    db = await createTestDatabase('two_pools');
    a = new PostgresIdempotencyStore(db.pool);
    b = new PostgresIdempotencyStore(db.newPool({ max: 10 }));
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await db.drop();
  });

  it('claims and completes the same keys from both in grouped statements, in any order, without a deadlock (40P01)', async () => {
    await a.claim('warm-up', 1); // creates the table
    // A table of some size, so that the planner reaches rows by index, in the order it is given keys.
    await db.pool.query(
      `INSERT INTO payments_idempotency (key, owner, lease_until, attempt, done, expires_at)
       SELECT 'filler:' || g, NULL, NULL, 1, true, now() + interval '1 hour' FROM generate_series(1, 20000) g`,
    );
    await db.pool.query('ANALYZE payments_idempotency');
    const errors: unknown[] = [];
    let done = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const keys = Array.from({ length: KEYS }, (_, i) => `${round}:${randomUUID()}:${i}`);
      // A takes every key (one grouped claim), then completes them in a shuffled order while B claims
      // them in another: the service redelivering what A is finishing.
      const claims = await Promise.all(keys.map((key) => a.claim(key, 30_000)));
      const tokens = claims.map((claim) => (claim.status === 'claimed' ? claim.token : ''));
      const order = shuffled(
        keys.map((key, i) => ({ key, token: tokens[i]! })),
        round,
      );
      const results = await Promise.allSettled([
        ...order.map(({ key, token }) => a.complete(key, token, 60_000)),
        ...shuffled(keys, round + 7).map((key) => b.claim(key, 30_000)),
      ]);
      for (const result of results) if (result.status === 'rejected') errors.push(result.reason);
      const after = await Promise.all(keys.map((key) => b.claim(key, 30_000)));
      done += after.filter((claim) => claim.status === 'done').length;
    }
    expect(errors.map((error) => (error as { code?: string }).code ?? String(error))).toEqual([]);
    expect(done).toBe(ROUNDS * KEYS);
  });

  it('gives each named instance a watch table and a sweeper lease of its own', async () => {
    const [unnamed, eu, us] = [a.intentWatchStore(), b.intentWatchStore('eu'), a.intentWatchStore('us')];
    const [x, y] = [randomUUID(), randomUUID()];
    await unnamed.watch({ kind: 'payment_intent', id: x, createdAt: 0, nextCheckAt: 0, checks: 0 });
    await eu.watch({ kind: 'payment_intent', id: y, createdAt: 0, nextCheckAt: 0, checks: 0 });
    expect((await unnamed.due(1, 10)).map((intent) => intent.id)).toEqual([x]);
    expect((await eu.due(1, 10)).map((intent) => intent.id)).toEqual([y]);
    expect(await us.due(1, 10)).toEqual([]);
    expect(await eu.lease('eu-1', 60_000)).toBe(true);
    expect(await us.lease('us-1', 60_000)).toBe(true);
    expect(await unnamed.lease('default-1', 60_000)).toBe(true);
    expect(await eu.lease('eu-2', 60_000)).toBe(false);
    expect(intentWatchTable('eu')).toBe('payments_watched_intents_eu');
    expect(intentWatchTable('EU-west')).toMatch(/^payments_watched_intents_eu_west_[0-9a-f]{8}$/);
    expect(intentWatchTable('eu-west')).not.toBe(intentWatchTable('eu_west'));
  });
});
