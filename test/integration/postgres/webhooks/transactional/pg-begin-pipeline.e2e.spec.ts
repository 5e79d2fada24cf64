import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { pgTransactionRunner } from '../../../../../lib/index.js';
import type { PaymentsTransaction } from '../../../../../lib/webhooks/contracts/payments-transaction-runner.interface.js';
import { preparePgStatement } from '../../../../../lib/webhooks/transactional/pg-transaction.runner.js';
import {
  RUN_AFTER_FIRST_STATEMENT,
  runsAfterFirstStatement,
} from '../../../../../lib/webhooks/transactional/pg-first-statement.js';

/*
 * Issue 31: pgTransactionRunner sends BEGIN in the same exchange as the inbox's prepared claim once the
 * claim is parsed on the connection (lib/postgres/postgres-begin.pipeline.ts). Against the real
 * PostgreSQL at PG_URL: what is sent per transaction, that the statement runs inside the transaction
 * BEGIN opened (rolled back with it, under the BEGIN's isolation level), and that the connection stays
 * usable after a rollback.
 */

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const table = `begin_pipeline_${process.pid}`;
const CLAIM = `INSERT INTO ${table} (k) VALUES ($1) ON CONFLICT DO NOTHING RETURNING k, current_setting('transaction_isolation') AS isolation`;

let pool: pg.Pool;
/** What each `client.query` call sent: 'fused' (BEGIN + a prepared statement), 'prepared', or the text. */
const sent: string[] = [];

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: PG_URL, max: 1, idleTimeoutMillis: 0 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [first] = args as [unknown];
      sent.push(
        typeof first === 'string'
          ? first
          : typeof (first as { submit?: unknown }).submit === 'function'
            ? 'fused'
            : 'prepared',
      );
      return query(...args);
    };
  });
  await pool.query(`CREATE TABLE IF NOT EXISTS ${table} (k text PRIMARY KEY)`);
  preparePgStatement('test_begin_pipeline', CLAIM);
}, 30_000);

afterAll(async () => {
  await pool?.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
  await pool?.end();
});

async function rowsFor(key: string): Promise<number> {
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE k = $1`, [key]);
  return rows[0].n as number;
}

function runAfterClaim<T>(
  begin: string | undefined,
  key: string,
  work: (tx: PaymentsTransaction, rows: Record<string, unknown>[] | undefined) => Promise<T>,
): Promise<T> {
  const runner = pgTransactionRunner(pool, begin === undefined ? {} : { begin });
  if (!runsAfterFirstStatement(runner)) throw new Error('pgTransactionRunner has no first-statement hook');
  return runner[RUN_AFTER_FIRST_STATEMENT]({ text: CLAIM, values: [key] }, work);
}

describe('pgTransactionRunner: BEGIN in the same exchange as the prepared first statement', () => {
  it('sends BEGIN alone the first time, then BEGIN with the parsed statement: one exchange instead of two', async () => {
    sent.length = 0;
    const first = await runAfterClaim(undefined, 'k-first', async (_tx, rows) => rows);
    expect(first).toEqual([{ k: 'k-first', isolation: 'read committed' }]);
    expect(sent).toEqual(['BEGIN', 'prepared', 'COMMIT']);

    sent.length = 0;
    const second = await runAfterClaim(undefined, 'k-second', async (_tx, rows) => rows);
    expect(second).toEqual([{ k: 'k-second', isolation: 'read committed' }]);
    expect(sent).toEqual(['fused', 'COMMIT']);
    expect(await rowsFor('k-second')).toBe(1);
  });

  it('runs the statement inside the transaction BEGIN opened: rolled back with it, under its isolation level', async () => {
    await runAfterClaim(undefined, 'k-warm', async () => undefined); // the statement is parsed on the connection
    sent.length = 0;
    const failure = new Error('the handler failed');
    let isolation: unknown;
    await expect(
      runAfterClaim('BEGIN ISOLATION LEVEL SERIALIZABLE', 'k-rolled-back', async (tx, rows) => {
        isolation = rows?.[0]?.['isolation'];
        await tx.query(`INSERT INTO ${table} (k) VALUES ($1)`, ['k-rolled-back-too']);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(sent[0]).toBe('fused');
    expect(sent.at(-1)).toBe('ROLLBACK');
    expect(isolation).toBe('serializable');
    expect(await rowsFor('k-rolled-back')).toBe(0);
    expect(await rowsFor('k-rolled-back-too')).toBe(0);
  });

  it('an error of the statement itself aborts the transaction, rolls back, and leaves the connection usable', async () => {
    await runAfterClaim(undefined, 'k-warm-2', async () => undefined);
    sent.length = 0;
    // A value that cannot be bound as text for $1 makes the prepared statement fail in the same exchange.
    const runner = pgTransactionRunner(pool);
    if (!runsAfterFirstStatement(runner)) throw new Error('no hook');
    await expect(
      runner[RUN_AFTER_FIRST_STATEMENT]({ text: CLAIM, values: ['x'.repeat(10) + '\u0000'] }, async () => 'never'),
    ).rejects.toThrow();
    expect(sent[0]).toBe('fused');
    expect(sent.at(-1)).toBe('ROLLBACK');
    const after = await runAfterClaim(undefined, 'k-after-error', async (_tx, rows) => rows?.[0]?.['k']);
    expect(after).toBe('k-after-error');
    expect(await rowsFor('k-after-error')).toBe(1);
  });
});
