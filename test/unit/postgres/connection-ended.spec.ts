import { describe, expect, it } from '@jest/globals';
import { isConnectionEnded } from '../../../lib/postgres/postgres-pool-errors.js';
import { PostgresIdempotencyStore } from '../../../lib/webhooks/stores/postgres-idempotency.store.js';

const ended = (): Error =>
  Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

/** A pool whose per-delivery statements answer from `answers`, in order (an Error rejects). */
function scriptedPool(answers: Array<Error | { rows: Record<string, unknown>[]; rowCount?: number }>, idleCount = 0) {
  const texts: string[] = [];
  return {
    texts,
    idleCount,
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

  it("isConnectionEnded looks through an ORM's wrapper (Drizzle's DrizzleQueryError keeps the driver's error as cause)", async () => {
    const { DrizzleQueryError } = await import('drizzle-orm/errors');
    expect(isConnectionEnded(new DrizzleQueryError('begin', [], ended()))).toBe(true);
    expect(isConnectionEnded(new Error('outer', { cause: new Error('mid', { cause: ended() }) }))).toBe(true);
    expect(
      isConnectionEnded(new DrizzleQueryError('begin', [], Object.assign(new Error('denied'), { code: '42501' }))),
    ).toBe(false);
    // A cycle of causes ends the walk.
    const loop: Error & { cause?: unknown } = new Error('loop');
    loop.cause = loop;
    expect(isConnectionEnded(loop)).toBe(false);
  });

  it('PostgresIdempotencyStore sends a statement once more when its connection had ended', async () => {
    const pool = scriptedPool([ended(), { rows: [{ status: 'claimed', attempt: 1, version: 0, handled: null }] }]);
    const claim = await storeOn(pool).claim('i:evt', RUN);
    expect(claim).toMatchObject({ status: 'claimed', attempt: 1 });
    expect(pool.texts).toHaveLength(2);
    expect(pool.texts[1]).toBe(pool.texts[0]);
  });

  it('once more than the pool keeps idle: every idle connection may have ended at once (a restart)', async () => {
    const three = scriptedPool(
      [ended(), ended(), ended(), { rows: [{ status: 'claimed', attempt: 1, version: 0, handled: null }] }],
      2,
    );
    expect(await storeOn(three).claim('i:evt', RUN)).toMatchObject({ status: 'claimed' });
    expect(three.texts).toHaveLength(4);
  });

  it('but boundedly, and never for an error of the statement itself', async () => {
    const twice = scriptedPool([ended(), ended()]);
    await expect(storeOn(twice).claim('i:evt', RUN)).rejects.toMatchObject({ code: '57P01' });
    expect(twice.texts).toHaveLength(2);
    const always = scriptedPool(Array.from({ length: 30 }, ended), 50);
    await expect(storeOn(always).claim('i:evt', RUN)).rejects.toMatchObject({ code: '57P01' });
    expect(always.texts).toHaveLength(12);
    const refused = scriptedPool([Object.assign(new Error('permission denied'), { code: '42501' })]);
    await expect(storeOn(refused).claim('i:evt', RUN)).rejects.toMatchObject({ code: '42501' });
    expect(refused.texts).toHaveLength(1);
  });
});
