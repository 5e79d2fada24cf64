import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { clsTransactionRunner, pgTransactionRunner, type PaymentsTransactionRunner } from '../../../../../lib/index.js';
import type { ClsTransactionHostLike } from '../../../../../lib/webhooks/transactional/cls-transaction.runner.js';
import { createTestDatabase, type TestDatabase } from '../../postgres-test.util.js';

/*
 * `ctx.transaction.query()` answers what pg answers: the rows as an array (what it always returned),
 * with `rowCount` and `command` beside them, so that a compare-and-set guard (`UPDATE ... WHERE status
 * IN (...)`) can tell whether it changed anything. Real PostgreSQL, through each built-in runner: pg,
 * and clsTransactionRunner over TypeORM 0.3, TypeORM 1.x and Drizzle (node-postgres). The CLS runner is
 * given a host of the ORM's own transaction (what `TransactionHost.withTransaction` does), so that the
 * suite runs in Jest without loading @nestjs-cls (CommonJS requiring the ESM-only Nest; see
 * cls-inbox.e2e.spec.ts for the whole app).
 */

type Runner = { name: string; runner: PaymentsTransactionRunner; command: boolean; close?: () => Promise<void> };

/** A host whose `withTransaction` opens a transaction of the ORM and exposes its handle as `tx`. */
function hostOf(transaction: <R>(fn: (tx: unknown) => Promise<R>) => Promise<R>): ClsTransactionHostLike {
  let current: unknown;
  return {
    get tx() {
      return current;
    },
    withTransaction: (_propagation, fn) =>
      transaction(async (tx) => {
        current = tx;
        try {
          return await fn();
        } finally {
          current = undefined;
        }
      }),
  };
}

async function typeormRunner(db: TestDatabase, pkg: string): Promise<Runner> {
  const { DataSource } = (await import(pkg)) as typeof import('typeorm');
  const source = await new DataSource({ type: 'postgres', url: db.url, poolSize: 2 }).initialize();
  const txHost = hostOf((fn) => source.transaction((manager) => fn(manager)));
  return {
    name: `TypeORM (${pkg})`,
    runner: clsTransactionRunner({ orm: 'typeorm', txHost }),
    command: false,
    close: () => source.destroy(),
  };
}

async function drizzleRunner(db: TestDatabase): Promise<Runner> {
  const { drizzle } = await import('drizzle-orm/node-postgres');
  const orm = drizzle(db.newPool({ max: 2 }));
  const txHost = hostOf((fn) => orm.transaction((tx) => fn(tx)));
  return { name: 'Drizzle (node-postgres)', runner: clsTransactionRunner({ orm: 'drizzle', txHost }), command: true };
}

let db: TestDatabase;
const runners: Runner[] = [];

beforeAll(async () => {
  db = await createTestDatabase('tx_query');
  await db.pool.query('CREATE TABLE orders (intent_id text PRIMARY KEY, status text NOT NULL)');
  runners.push({ name: 'pg', runner: pgTransactionRunner(db.newPool({ max: 2 })), command: true });
  runners.push(await typeormRunner(db, 'typeorm'));
  runners.push(await typeormRunner(db, 'typeorm-1'));
  runners.push(await drizzleRunner(db));
}, 60_000);

afterAll(async () => {
  for (const r of runners) await r.close?.();
  await db?.drop();
});

describe.each(['pg', 'TypeORM (typeorm)', 'TypeORM (typeorm-1)', 'Drizzle (node-postgres)'])(
  'ctx.transaction.query() with %s (real PostgreSQL)',
  (name) => {
    const runnerOf = (): Runner => runners.find((r) => r.name === name)!;
    const intent = `pi_${name.replace(/\W/g, '_')}`;

    beforeEach(async () => {
      await db.pool.query('DELETE FROM orders WHERE intent_id = $1', [intent]);
      await db.pool.query("INSERT INTO orders VALUES ($1, 'pending')", [intent]);
    });

    const casPaid = "UPDATE orders SET status = 'paid' WHERE intent_id = $1 AND status IN ('pending', 'authorised')";

    it('tells a compare-and-set that changed a row (rowCount 1) from one that changed none (0)', async () => {
      const { runner, command } = runnerOf();
      const first = await runner.run((tx) => tx.query(casPaid, [intent]));
      expect(first.rowCount).toBe(1);
      expect([...first]).toEqual([]);
      if (command) expect(first.command).toBe('UPDATE');
      else expect(first.command).toBeUndefined();
      const late = await runner.run((tx) =>
        tx.query("UPDATE orders SET status = 'authorised' WHERE intent_id = $1 AND status IN ('pending')", [intent]),
      );
      expect(late.rowCount).toBe(0);
      expect((await db.pool.query('SELECT status FROM orders WHERE intent_id = $1', [intent])).rows).toEqual([
        { status: 'paid' },
      ]);
    });

    it('still resolves to the rows as an array (RETURNING, SELECT), the extras non-enumerable', async () => {
      const { runner } = runnerOf();
      const updated = await runner.run((tx) => tx.query<{ status: string }>(`${casPaid} RETURNING status`, [intent]));
      expect(Array.isArray(updated)).toBe(true);
      expect(updated).toEqual([{ status: 'paid' }]);
      expect(updated.rows).toEqual([{ status: 'paid' }]);
      expect(updated.rowCount).toBe(1);
      expect(Object.keys(updated)).toEqual(['0']);
      expect(JSON.stringify(updated)).toBe('[{"status":"paid"}]');
      const selected = await runner.run((tx) => tx.query('SELECT status FROM orders WHERE intent_id = $1', [intent]));
      expect(selected).toEqual([{ status: 'paid' }]);
      expect(selected.rowCount).toBe(1);
    });
  },
);
