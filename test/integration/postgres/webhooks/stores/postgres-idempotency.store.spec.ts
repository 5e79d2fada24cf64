import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { PaymentsConfigurationError } from '../../../../../lib/errors/payments.errors.js';
import {
  PostgresIdempotencyStore,
  postgresIdempotencyStoreSchema,
} from '../../../../../lib/webhooks/stores/postgres-idempotency.store.js';
import type { PostgresQueryable } from '../../../../../lib/postgres/postgres-sql.util.js';
import { describeIdempotencyStore } from '../../../../../lib/testing/index.js';
import {
  createTestDatabase,
  createUnreachablePool,
  deadPort,
  waitFor,
  type TestDatabase,
} from '../../postgres-test.util.js';

// Compile-time: a node-postgres Pool is accepted as it is (checked by `npm run typecheck`).
type Expect<T extends true> = T;
export type AcceptsPgPool = Expect<pg.Pool extends PostgresQueryable ? true : false>;

const LONG_LEASE_MS = 60_000;
const RETENTION_MS = 60_000;

// The contract every store keeps (claim races, tokens, expiry, release, retention, renewal).
describe('PostgresIdempotencyStore contract (real PostgreSQL)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('store_contract');
  });
  afterAll(async () => {
    await db.drop();
  });
  describeIdempotencyStore(
    'PostgresIdempotencyStore',
    () => new PostgresIdempotencyStore(db.pool, { table: 'idem_contract' }),
    {
      forget: async (_store, key) => {
        await db.pool.query('DELETE FROM idem_contract WHERE key = $1', [key]);
      },
      teardown: (store) => store.close(),
    },
  );
});

// The same contract with one statement per call (batchStatements: false).
describe('PostgresIdempotencyStore contract, one statement per call (real PostgreSQL)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('store_contract_single');
  });
  afterAll(async () => {
    await db.drop();
  });
  describeIdempotencyStore(
    'PostgresIdempotencyStore { batchStatements: false }',
    () => new PostgresIdempotencyStore(db.pool, { table: 'idem_contract', batchStatements: false }),
    {
      forget: async (_store, key) => {
        await db.pool.query('DELETE FROM idem_contract WHERE key = $1', [key]);
      },
      teardown: (store) => store.close(),
    },
  );
});

describe('PostgresIdempotencyStore (real PostgreSQL)', () => {
  let db: TestDatabase;
  let store: PostgresIdempotencyStore;
  let table: string;
  let tables = 0;

  beforeAll(async () => {
    db = await createTestDatabase('store');
  });

  beforeEach(() => {
    table = `idem_${++tables}`;
    store = new PostgresIdempotencyStore(db.pool, { table });
  });

  afterAll(async () => {
    await db.drop();
  });

  const row = async (key: string): Promise<Record<string, unknown> | undefined> =>
    (
      await db.pool.query(
        `SELECT *, lease_until > clock_timestamp() AS leased, extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS ttl_ms FROM ${table} WHERE key = $1`,
        [key],
      )
    ).rows[0];

  it('[W4] grants exactly one of 100 concurrent claims on one key, across 4 pools', async () => {
    const pools = [db.pool, db.newPool(), db.newPool(), db.newPool()];
    await store.claim('warm-up', LONG_LEASE_MS); // the table exists before the race
    const stores = pools.map((pool) => new PostgresIdempotencyStore(pool, { table }));
    const claims = await Promise.all(
      Array.from({ length: 100 }, (_, i) => stores[i % stores.length]!.claim('evt-1:handler', LONG_LEASE_MS)),
    );
    expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.status === 'busy')).toHaveLength(99);
  });

  it('creates its table on first use, once, even when several stores start at the same moment', async () => {
    const stores = [0, 1, 2, 3].map(() => new PostgresIdempotencyStore(db.newPool(), { table }));
    const claims = await Promise.all(stores.map((s, i) => s.claim(`evt-${i}:h`, LONG_LEASE_MS)));
    expect(claims.map((c) => c.status)).toEqual(['claimed', 'claimed', 'claimed', 'claimed']);
    const exists = await db.pool.query(`SELECT to_regclass($1) AS t`, [table]);
    expect(exists.rows[0]!['t']).toBe(table);
  });

  it('[W4] answers done after the owner completes, for every later claim, from any instance', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('evt-1:h', claim.token, RETENTION_MS);
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'done' });
    const other = new PostgresIdempotencyStore(db.newPool(), { table });
    expect(await other.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'done' });
  });

  it('keeps the done row for the retention passed to complete', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('evt-1:h', claim.token, 123_000);
    const ttl = Number((await row('evt-1:h'))!['ttl_ms']);
    expect(ttl).toBeGreaterThan(100_000);
    expect(ttl).toBeLessThanOrEqual(123_000);
  });

  it('ignores complete with a token that does not own the lease', async () => {
    const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.complete('evt-1:h', '00000000-0000-4000-8000-000000000000', RETENTION_MS);
    expect(await row('evt-1:h')).toMatchObject({ done: false, owner: claim.token, leased: true });
    expect(await store.claim('evt-1:h', LONG_LEASE_MS)).toEqual({ status: 'busy' });
  });

  it('ignores complete from an owner whose lease expired and was claimed by another delivery', async () => {
    const stale = await store.claim('evt-1:h', 100);
    if (stale.status !== 'claimed') throw new Error('expected a claim');
    const fresh = await waitFor(async () => {
      const claim = await store.claim('evt-1:h', LONG_LEASE_MS);
      return claim.status === 'claimed' ? claim : undefined;
    });
    await store.complete('evt-1:h', stale.token, RETENTION_MS);
    expect(await row('evt-1:h')).toMatchObject({ done: false, owner: fresh.token });
  });

  it('deletes expired rows in batches by the expires_at index, leaving live ones', async () => {
    for (let i = 0; i < 30; i++) {
      const claim = await store.claim(`old-${i}:h`, LONG_LEASE_MS);
      if (claim.status === 'claimed') await store.complete(`old-${i}:h`, claim.token, 1);
    }
    const live = await store.claim('live:h', LONG_LEASE_MS);
    expect(live.status).toBe('claimed');
    await waitFor(async () =>
      Number(
        (await db.pool.query(`SELECT count(*) AS n FROM ${table} WHERE expires_at <= clock_timestamp()`)).rows[0]!['n'],
      ) === 30
        ? true
        : undefined,
    );
    expect(await store.deleteExpired(20)).toBe(20);
    expect(await store.deleteExpired(20)).toBe(10);
    expect(await store.deleteExpired(20)).toBe(0);
    const left = await db.pool.query(`SELECT key FROM ${table}`);
    expect(left.rows.map((r) => r['key'])).toEqual(['live:h']);
    // The batch is an index range, not a scan of the table.
    await db.pool.query('SET enable_seqscan = off');
    const plan = await db.pool.query(
      `EXPLAIN DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE expires_at <= clock_timestamp() ORDER BY expires_at LIMIT 20 FOR UPDATE SKIP LOCKED)`,
    );
    await db.pool.query('RESET enable_seqscan');
    expect(plan.rows.map((r) => String(r['QUERY PLAN'])).join('\n')).toMatch(
      /Index Scan using "?idem_\d+_expires_at_idx/,
    );
  });

  it('cleans up in the background every cleanupEvery claims', async () => {
    const background = new PostgresIdempotencyStore(db.pool, { table, cleanupEvery: 5, cleanupBatchSize: 100 });
    for (let i = 0; i < 4; i++) {
      const claim = await background.claim(`old-${i}:h`, LONG_LEASE_MS);
      if (claim.status === 'claimed') await background.complete(`old-${i}:h`, claim.token, 1);
    }
    await waitFor(async () =>
      Number(
        (await db.pool.query(`SELECT count(*) AS n FROM ${table} WHERE expires_at <= clock_timestamp()`)).rows[0]!['n'],
      ) === 4
        ? true
        : undefined,
    );
    await background.claim('fifth:h', LONG_LEASE_MS);
    await background.close(); // waits for the batch the fifth claim started
    const left = await db.pool.query(`SELECT key FROM ${table} ORDER BY key`);
    expect(left.rows.map((r) => r['key'])).toEqual(['fifth:h']);
  });

  it('rejects (so the receiver answers 503) when the database is unreachable', async () => {
    const down = new PostgresIdempotencyStore(createUnreachablePool(await deadPort()), { table });
    await expect(down.claim('evt-1:h', LONG_LEASE_MS)).rejects.toThrow();
    await expect(down.complete('evt-1:h', '00000000-0000-4000-8000-000000000000', RETENTION_MS)).rejects.toThrow();
    await expect(down.renew('evt-1:h', '00000000-0000-4000-8000-000000000000', LONG_LEASE_MS)).rejects.toThrow();
  });

  it('renew moves lease_until to the lease asked for, and the row outlives it', async () => {
    const short = new PostgresIdempotencyStore(db.pool, { table, attemptsTtlSeconds: 1 });
    const claim = await short.claim('evt-1:h', 500);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    expect(await short.renew('evt-1:h', claim.token, 123_000)).toBe(true);
    const renewed = (
      await db.pool.query(
        `SELECT extract(epoch FROM lease_until - clock_timestamp()) * 1000 AS lease_ms, extract(epoch FROM expires_at - lease_until) * 1000 AS margin_ms FROM ${table} WHERE key = $1`,
        ['evt-1:h'],
      )
    ).rows[0]!;
    expect(Number(renewed['lease_ms'])).toBeGreaterThan(100_000);
    expect(Number(renewed['lease_ms'])).toBeLessThanOrEqual(123_000);
    expect(Number(renewed['margin_ms'])).toBeGreaterThanOrEqual(0);
    expect(await row('evt-1:h')).toMatchObject({ owner: claim.token, done: false, leased: true, attempt: 1 });
  });

  it('ping() resolves with one SELECT 1 on a live database, without creating the table', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
    const exists = await db.pool.query('SELECT to_regclass($1) AS t', [table]);
    expect(exists.rows[0]!['t']).toBeNull();
  });

  it('ping() rejects when the pool points at a dead port (the health indicator reports down)', async () => {
    const down = new PostgresIdempotencyStore(createUnreachablePool(await deadPort()), { table });
    await expect(down.ping()).rejects.toThrow();
  });

  it('uses a table that migrations created, with createTable: false', async () => {
    await db.pool.query('CREATE SCHEMA IF NOT EXISTS billing');
    await db.pool.query(postgresIdempotencyStoreSchema('billing.claims'));
    const migrated = new PostgresIdempotencyStore(db.pool, { table: 'billing.claims', createTable: false });
    expect(await migrated.claim('evt-1:h', LONG_LEASE_MS)).toMatchObject({ status: 'claimed', attempt: 1 });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM billing.claims')).rows[0]!['n']).toBe(1);
  });

  it.each([['payments; DROP TABLE x'], ['a.b.c'], [''], ['"quoted"'], ['x'.repeat(64)]])(
    'refuses the table name %j with a PaymentsConfigurationError naming the option',
    (name) => {
      expect(() => new PostgresIdempotencyStore(db.pool, { table: name })).toThrow(PaymentsConfigurationError);
      expect(() => new PostgresIdempotencyStore(db.pool, { table: name })).toThrow(/PostgresIdempotencyStore table/);
      expect(() => postgresIdempotencyStoreSchema(name)).toThrow(PaymentsConfigurationError);
    },
  );

  it('refuses something that is not a pool', () => {
    expect(() => new PostgresIdempotencyStore({} as PostgresQueryable)).toThrow(/PostgresIdempotencyStore pool/);
  });

  it('sends the per-delivery statements as named prepared statements, unless preparedStatements is false', async () => {
    const prepared = async (options: { preparedStatements?: boolean }): Promise<string[]> => {
      const client = await db.pool.connect();
      try {
        // A pooled connection keeps what earlier tests' stores prepared on it.
        await client.query('DEALLOCATE ALL');
        const own = new PostgresIdempotencyStore(client, { table, ...options });
        const claim = await own.claim('evt-p:h', LONG_LEASE_MS);
        if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
        expect(await own.renew('evt-p:h', claim.token, LONG_LEASE_MS)).toBe(true);
        await own.complete('evt-p:h', claim.token, RETENTION_MS);
        expect(await own.claim('evt-p:h', LONG_LEASE_MS)).toEqual({ status: 'done' });
        // pg_prepared_statements lists this session's own statements only.
        const names = await client.query('SELECT name FROM pg_prepared_statements ORDER BY name');
        await db.pool.query(`DELETE FROM ${table}`);
        return names.rows.map((r) => String(r['name']).replace(/_[0-9a-f]{16}$/, ''));
      } finally {
        client.release();
      }
    };
    expect(await prepared({})).toEqual([
      'payments_idem_claim',
      'payments_idem_complete',
      'payments_idem_renew',
      'payments_idem_state',
    ]);
    expect(await prepared({ preparedStatements: false })).toEqual([]);
  });

  it('refuses a preparedStatements option that is not a boolean, naming it', () => {
    expect(
      () => new PostgresIdempotencyStore(db.pool, { table, preparedStatements: 'yes' as unknown as boolean }),
    ).toThrow(/PostgresIdempotencyStore preparedStatements/);
  });

  /** A pool whose clients record the text of every statement they send. */
  const recordingPool = (): { pool: pg.Pool; sent: string[] } => {
    const pool = db.newPool();
    const sent: string[] = [];
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
        config: unknown,
        ...rest: unknown[]
      ) => {
        sent.push(typeof config === 'string' ? config : (config as { text: string }).text);
        return query(config, ...rest);
      };
    });
    return { pool, sent };
  };
  // The statement's verb: a grouped completion locks its rows first (`WITH l AS ... FOR UPDATE`), then UPDATEs.
  const kinds = (sent: string[]): string[] =>
    sent.map(
      (text) =>
        (text.includes('unnest(') ? 'many:' : 'one:') +
        /\b(INSERT|UPDATE|SELECT|DELETE)\b/.exec(text.replace(/^WITH l AS MATERIALIZED \(.*?\)\n/s, ''))![1],
    );

  it('sends the claims and the completions of one event-loop turn as one statement each', async () => {
    const { pool, sent } = recordingPool();
    const batched = new PostgresIdempotencyStore(pool, { table });
    await batched.claim('warm-up:h', LONG_LEASE_MS); // creates the table
    sent.length = 0;
    const keys = Array.from({ length: 20 }, (_, i) => `evt-${i}:h`);
    const claims = await Promise.all(keys.map((key) => batched.claim(key, LONG_LEASE_MS)));
    expect(claims.map((c) => (c.status === 'claimed' ? c.attempt : c.status))).toEqual(keys.map(() => 1));
    expect(kinds(sent)).toEqual(['many:INSERT']);
    sent.length = 0;
    await Promise.all(
      claims.map((claim, i) =>
        claim.status === 'claimed' ? batched.complete(keys[i]!, claim.token, RETENTION_MS) : undefined,
      ),
    );
    expect(kinds(sent)).toEqual(['many:UPDATE']);
    const done = await db.pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE done AND key LIKE 'evt-%'`);
    expect(done.rows[0]!['n']).toBe(20);
    // Every later claim, batched again, reads done.
    expect((await Promise.all(keys.map((key) => batched.claim(key, LONG_LEASE_MS)))).map((c) => c.status)).toEqual(
      keys.map(() => 'done'),
    );
  });

  it('[W4] grants one claim when one turn asks for the same key twice (the repeat goes in a later statement)', async () => {
    const { pool, sent } = recordingPool();
    const batched = new PostgresIdempotencyStore(pool, { table });
    await batched.claim('warm-up:h', LONG_LEASE_MS);
    sent.length = 0;
    const claims = await Promise.all(
      ['evt-a:h', 'evt-b:h', 'evt-a:h', 'evt-a:h'].map((key) => batched.claim(key, LONG_LEASE_MS)),
    );
    expect(claims.map((c) => c.status)).toEqual(['claimed', 'claimed', 'busy', 'busy']);
    expect(kinds(sent)[0]).toBe('many:INSERT');
  });

  it('completes only the calls whose token owns the lease, within one batch', async () => {
    const batched = new PostgresIdempotencyStore(db.pool, { table });
    const [first, second] = await Promise.all([
      batched.claim('evt-1:h', LONG_LEASE_MS),
      batched.claim('evt-2:h', LONG_LEASE_MS),
    ]);
    if (first?.status !== 'claimed' || second?.status !== 'claimed') throw new Error('expected two claims');
    await Promise.all([
      batched.complete('evt-1:h', first.token, RETENTION_MS),
      batched.complete('evt-2:h', '00000000-0000-4000-8000-000000000000', RETENTION_MS),
    ]);
    expect(await row('evt-1:h')).toMatchObject({ done: true });
    expect(await row('evt-2:h')).toMatchObject({ done: false, owner: second.token, leased: true });
  });

  it('rejects every call of a batch when its statement fails (the receiver answers 503 to each)', async () => {
    const batched = new PostgresIdempotencyStore(createUnreachablePool(await deadPort()), {
      table,
      createTable: false,
    });
    const results = await Promise.allSettled(
      ['evt-1:h', 'evt-2:h', 'evt-3:h'].map((key) => batched.claim(key, LONG_LEASE_MS)),
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });

  it('sends one statement per call with batchStatements: false, and refuses a value that is not a boolean', async () => {
    const { pool, sent } = recordingPool();
    const single = new PostgresIdempotencyStore(pool, { table, batchStatements: false });
    await single.claim('warm-up:h', LONG_LEASE_MS);
    sent.length = 0;
    await Promise.all(['evt-1:h', 'evt-2:h', 'evt-3:h'].map((key) => single.claim(key, LONG_LEASE_MS)));
    expect(kinds(sent)).toEqual(['one:INSERT', 'one:INSERT', 'one:INSERT']);
    expect(() => new PostgresIdempotencyStore(db.pool, { table, batchStatements: 1 as unknown as boolean })).toThrow(
      /PostgresIdempotencyStore batchStatements/,
    );
  });
});
