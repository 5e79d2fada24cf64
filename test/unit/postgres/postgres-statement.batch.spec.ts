import { describe, expect, it } from '@jest/globals';
import { PostgresStatementBatch } from '../../../lib/postgres/postgres-statement.batch.js';

interface Call {
  readonly key: string;
  readonly n: number;
}

/** A batch whose `send` records each statement's inputs and answers n * 10 per input. */
function recording(maxSize = 100): { batch: PostgresStatementBatch<Call, number>; sent: string[][] } {
  const sent: string[][] = [];
  const batch = new PostgresStatementBatch<Call, number>(async (inputs) => {
    sent.push(inputs.map((input) => input.key));
    return inputs.map((input) => input.n * 10);
  }, maxSize);
  return { batch, sent };
}

describe('PostgresStatementBatch (group commit per event-loop turn)', () => {
  it('sends the calls of one turn together and answers each with its own result', async () => {
    const { batch, sent } = recording();
    const results = await Promise.all([1, 2, 3].map((n) => batch.add({ key: `k${n}`, n })));
    expect(results).toEqual([10, 20, 30]);
    expect(sent).toEqual([['k1', 'k2', 'k3']]);
  });

  it('sends calls of later turns in statements of their own', async () => {
    const { batch, sent } = recording();
    await batch.add({ key: 'a', n: 1 });
    await batch.add({ key: 'b', n: 2 });
    expect(sent).toEqual([['a'], ['b']]);
  });

  it('puts a repeated key in a later statement, after the first of its key was sent', async () => {
    const { batch, sent } = recording();
    const results = await Promise.all([
      batch.add({ key: 'a', n: 1 }),
      batch.add({ key: 'b', n: 2 }),
      batch.add({ key: 'a', n: 3 }),
      batch.add({ key: 'a', n: 4 }),
    ]);
    expect(results).toEqual([10, 20, 30, 40]);
    expect(sent).toEqual([['a', 'b'], ['a'], ['a']]);
  });

  it('splits a turn into statements of at most maxSize calls', async () => {
    const { batch, sent } = recording(2);
    await Promise.all([1, 2, 3, 4, 5].map((n) => batch.add({ key: `k${n}`, n })));
    expect(sent.map((keys) => keys.length)).toEqual([2, 2, 1]);
  });

  it('rejects every call of a statement that failed (or threw before sending), and only those', async () => {
    let fail = true;
    const batch = new PostgresStatementBatch<Call, number>((inputs) => {
      if (inputs.some((input) => input.key === 'throws')) throw new Error('threw at once');
      if (fail) return Promise.reject(new Error('connection refused'));
      return Promise.resolve(inputs.map(() => 1));
    }, 100);
    const failed = await Promise.allSettled([batch.add({ key: 'a', n: 1 }), batch.add({ key: 'b', n: 2 })]);
    expect(failed.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : r.status))).toEqual([
      'connection refused',
      'connection refused',
    ]);
    await expect(batch.add({ key: 'throws', n: 3 })).rejects.toThrow('threw at once');
    fail = false;
    await expect(batch.add({ key: 'c', n: 4 })).resolves.toBe(1);
  });
});
