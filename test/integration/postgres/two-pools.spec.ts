import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PostgresIdempotencyStore } from '../../../lib/index.js';
import { createTestDatabase, type TestDatabase } from './postgres-test.util.js';

/*
 * Two processes (two pools, two stores) on one table: grouped claims and grouped completions of the
 * same records (two handlers' slots each) never deadlock, and named instances never share a watch list,
 * whatever their names (issue 40, defect 4: an instance named `lease`, `x` and `x_lease`, `due`, `fresh`).
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

  it('claims and completes the same records from both in grouped statements, in any order, without a deadlock (40P01)', async () => {
    const slots = ['succeeded|Shop.paid', 'succeeded|Audit.any'];
    const run = (slot: string, leaseMs: number) => ({ slot, eventId: '4b6d8f0a-2c4e-4f6a-8b0c-2d4e6f8a0b1c', leaseMs });
    await a.claim('i:warm-up', run(slots[0]!, 1)); // creates the schema
    // A table of some size, so that the planner reaches rows by index, in the order it is given keys.
    await db.pool.query(
      `INSERT INTO payments_idempotency (key, expires_at) SELECT 'i:filler-' || g, now() + interval '1 hour' FROM generate_series(1, 20000) g`,
    );
    await db.pool.query('ANALYZE payments_idempotency');
    const errors: unknown[] = [];
    let done = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const runs = Array.from({ length: KEYS }, (_, i) => ({
        key: `i:${round}-${randomUUID()}`.slice(0, 40),
        slot: slots[i % 2]!,
      }));
      // Two handlers of each intent: every record claimed twice, in one batch.
      const both = runs.flatMap((r) => [r, { key: r.key, slot: slots[1 - slots.indexOf(r.slot)]! }]);
      // A takes every run (one grouped claim), then completes them in a shuffled order while B claims
      // them in another: the service redelivering what A is finishing.
      const claims = await Promise.all(both.map(({ key, slot }) => a.claim(key, run(slot, 30_000))));
      const order = shuffled(
        both.map((r, i) => ({ ...r, token: claims[i]!.status === 'claimed' ? claims[i]!.token : '' })),
        round,
      );
      const results = await Promise.allSettled([
        ...order.map(({ key, slot, token }) =>
          a.complete(key, { slot, token, eventId: run(slot, 0).eventId, retentionMs: 60_000 }),
        ),
        ...shuffled(both, round + 7).map(({ key, slot }) => b.claim(key, run(slot, 30_000))),
      ]);
      for (const result of results) if (result.status === 'rejected') errors.push(result.reason);
      const after = await Promise.all(both.map(({ key, slot }) => b.claim(key, run(slot, 30_000))));
      done += after.filter((claim) => claim.status === 'done').length;
    }
    expect(errors.map((error) => (error as { code?: string }).code ?? String(error))).toEqual([]);
    expect(done).toBe(ROUNDS * KEYS * 2);
  });

  it('gives each named instance a watch list and a sweeper lease of its own, in one table, whatever the names', async () => {
    const names = [undefined, 'eu', 'us', 'lease', 'x', 'x_lease', 'due', 'fresh', 'EU-west', 'eu_west'];
    const lists = names.map((name, i) => (i % 2 === 0 ? a : b).intentWatchStore(name));
    const ids = names.map(() => randomUUID());
    for (const [i, list] of lists.entries()) {
      await list.watch({ kind: 'payment_intent', id: ids[i]!, createdAt: 0, nextCheckAt: 0, checks: 0 });
    }
    for (const [i, list] of lists.entries()) {
      expect((await list.due(1, 10)).map((intent) => intent.id)).toEqual([ids[i]]);
      expect(await list.lease(`owner-${i}`, 60_000)).toBe(true);
    }
    for (const [i, list] of lists.entries()) expect(await list.lease(`other-${i}`, 60_000)).toBe(false);
    const tables = await db.pool.query(
      "SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'payments_idempotency%' OR tablename LIKE 'payments_watched%'",
    );
    expect(tables.rows[0]!['n']).toBe(2); // the records and the leases: no table per instance
  });
});
