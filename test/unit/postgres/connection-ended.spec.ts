import { describe, expect, it } from '@jest/globals';
import { isConnectionEnded } from '../../../lib/postgres/postgres-pool-errors.js';
import { PostgresIdempotencyStore } from '../../../lib/webhooks/stores/postgres-idempotency.store.js';

const ended = (): Error =>
  Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

/** A pool whose per-delivery statements answer from `answers`, in order (an Error rejects). */
function scriptedPool(answers: Array<Error | { rows: Record<string, unknown>[]; rowCount?: number }>) {
  const texts: string[] = [];
  return {
    texts,
    query(text: string): Promise<unknown> {
      texts.push(text);
      const answer = answers.shift();
      if (answer === undefined) return Promise.reject(new Error('no answer scripted'));
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
}

const RUN = { slot: 'succeeded|H.m', eventId: '5e7a9c1b-3d5f-4b7d-9f1a-3c5e7a9b1d3f', leaseMs: 30_000 };

const storeOn = (pool: ReturnType<typeof scriptedPool>) =>
  new PostgresIdempotencyStore(pool as unknown as ConstructorParameters<typeof PostgresIdempotencyStore>[0], {
    createTable: false,
    preparedStatements: false,
    batchStatements: false,
    cleanupEvery: 0,
  });

describe('a pooled connection the server ended', () => {
  it('isConnectionEnded: the connection ended (57P, 08, a closed socket), not the statement', () => {
    expect(isConnectionEnded(ended())).toBe(true);
    expect(isConnectionEnded(Object.assign(new Error('x'), { code: '08006' }))).toBe(true);
    expect(isConnectionEnded(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isConnectionEnded(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isConnectionEnded(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isConnectionEnded(new Error('syntax error at or near "SELEC"'))).toBe(false);
    expect(isConnectionEnded(undefined)).toBe(false);
    expect(isConnectionEnded('Connection terminated')).toBe(false);
  });

  it('PostgresIdempotencyStore sends a statement once more when its connection had ended', async () => {
    const pool = scriptedPool([ended(), { rows: [{ status: 'claimed', attempt: 1, version: 0, handled: null }] }]);
    const claim = await storeOn(pool).claim('i:evt', RUN);
    expect(claim).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(pool.texts).toHaveLength(2);
    expect(pool.texts[1]).toBe(pool.texts[0]);
  });

  it('but only once, and never for an error of the statement itself', async () => {
    const twice = scriptedPool([ended(), ended()]);
    await expect(storeOn(twice).claim('i:evt', RUN)).rejects.toMatchObject({ code: '57P01' });
    expect(twice.texts).toHaveLength(2);
    const refused = scriptedPool([Object.assign(new Error('permission denied'), { code: '42501' })]);
    await expect(storeOn(refused).claim('i:evt', RUN)).rejects.toMatchObject({ code: '42501' });
    expect(refused.texts).toHaveLength(1);
  });
});
