import { describe, expect, it } from '@jest/globals';
import { clsTransactionRunner } from '../../../../lib/index.js';
import type { PaymentsTransaction } from '../../../../lib/webhooks/index.js';
import { queryAnswerOf, queryResultOf } from '../../../../lib/webhooks/transactional/payments-query.result.js';

describe('ctx.transaction.query() results', () => {
  it('is the rows array, carrying rows, rowCount and command as non-enumerable properties', () => {
    const result = queryResultOf({ rows: [{ a: 1 }], rowCount: 1, command: 'UPDATE' });
    expect(result).toEqual([{ a: 1 }]);
    expect(Object.keys(result)).toEqual(['0']);
    expect(result.rows).toBe(result);
    expect(result.rowCount).toBe(1);
    expect(result.command).toBe('UPDATE');
    expect(JSON.stringify(result)).toBe('[{"a":1}]');
  });

  it("reads node-postgres' QueryResult", () => {
    expect(queryAnswerOf({ rows: [], rowCount: 0, command: 'UPDATE', fields: [] })).toEqual({
      rows: [],
      rowCount: 0,
      command: 'UPDATE',
    });
  });

  it("reads postgres-js' rows array (count, command on it)", () => {
    const rows = Object.assign([{ id: 1 }], { count: 1, command: 'INSERT' });
    const answer = queryAnswerOf(rows);
    expect([[...answer.rows], answer.rowCount, answer.command]).toEqual([[{ id: 1 }], 1, 'INSERT']);
  });

  it('leaves rowCount null and command undefined for a bare rows array (nothing tells them)', () => {
    expect(queryAnswerOf([{ id: 1 }])).toEqual({ rows: [{ id: 1 }], rowCount: null, command: undefined });
  });

  it("passes a custom query function's QueryResult through clsTransactionRunner", async () => {
    const txHost = { tx: 'tx', withTransaction: <R>(_p: string, fn: () => Promise<R>) => fn() };
    const runner = clsTransactionRunner({
      txHost,
      orm: async (_tx, text) => (text === 'SELECT 1' ? [] : { rows: [{ id: 7 }], rowCount: 3, command: 'UPDATE' }),
    });
    const result = await runner.run((tx: PaymentsTransaction) => tx.query('UPDATE t SET x = 1 RETURNING id'));
    expect(result).toEqual([{ id: 7 }]);
    expect([result.rowCount, result.command]).toEqual([3, 'UPDATE']);
  });

  it('keeps a custom query function that resolves to rows working (rowCount unknown: null)', async () => {
    const txHost = { tx: 'tx', withTransaction: <R>(_p: string, fn: () => Promise<R>) => fn() };
    const runner = clsTransactionRunner({ txHost, orm: async () => [{ id: 1 }] });
    const result = await runner.run((tx) => tx.query('SELECT id FROM t'));
    expect(result).toEqual([{ id: 1 }]);
    expect(result.rowCount).toBeNull();
  });
});
