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

const SLOT = 'succeeded|Handler.method';
const EVENT = '3a5c7e9b-1d2f-4a6b-8c0d-2e4f6a8b0c1d';
const FOREIGN = '00000000-0000-4000-8000-000000000000';
const run = (leaseMs: number) => ({ slot: SLOT, eventId: EVENT, leaseMs });
const done = (token: string, retentionMs: number) => ({ slot: SLOT, token, eventId: EVENT, retentionMs });

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

  /** The row of record `key`: its run of SLOT, its completed runs of SLOT, and its time to live. */
  const row = async (key: string): Promise<Record<string, unknown> | undefined> =>
    (
      await db.pool.query(
        `SELECT runs -> $2 AS run, done -> $2 AS done, version, extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS ttl_ms FROM ${table} WHERE key = $1`,
        [key, SLOT],
      )
    ).rows[0];
  const claimed = async (key: string, leaseMs = LONG_LEASE_MS, on: PostgresIdempotencyStore = store) => {
    const claim = await on.claim(key, run(leaseMs));
    if (claim.status !== 'claimed') throw new Error(`expected a claim of ${key}, got ${claim.status}`);
    return claim;
  };

  it('[W4] grants exactly one of 100 concurrent claims on one slot, across 4 pools', async () => {
    const pools = [db.pool, db.newPool(), db.newPool(), db.newPool()];
    await store.claim('i:warm-up', run(LONG_LEASE_MS)); // the table exists before the race
    const stores = pools.map((pool) => new PostgresIdempotencyStore(pool, { table }));
    const claims = await Promise.all(
      Array.from({ length: 100 }, (_, i) => stores[i % stores.length]!.claim('i:race', run(LONG_LEASE_MS))),
    );
    expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.status === 'busy')).toHaveLength(99);
  });

  it('[W4] grants one claim per slot when the handlers of one intent claim it at once from 4 pools (no spurious busy)', async () => {
    const pools = [db.pool, db.newPool(), db.newPool(), db.newPool()];
    await store.claim('i:warm-up', run(LONG_LEASE_MS));
    const stores = pools.map((pool) => new PostgresIdempotencyStore(pool, { table, batchStatements: false }));
    const claims = await Promise.all(
      stores.map((s, i) =>
        s.claim('i:new-intent', { slot: `succeeded|H.m${i}`, eventId: EVENT, leaseMs: LONG_LEASE_MS }),
      ),
    );
    expect(claims.map((c) => c.status)).toEqual(['claimed', 'claimed', 'claimed', 'claimed']);
  });

  it('creates its schema on first use, once, even when several stores start at the same moment', async () => {
    const stores = [0, 1, 2, 3].map(() => new PostgresIdempotencyStore(db.newPool(), { table }));
    const claims = await Promise.all(stores.map((s, i) => s.claim(`i:evt-${i}`, run(LONG_LEASE_MS))));
    expect(claims.map((c) => c.status)).toEqual(['claimed', 'claimed', 'claimed', 'claimed']);
    const exists = await db.pool.query(`SELECT to_regclass($1) AS t, to_regproc($2) AS f`, [table, `${table}_claim`]);
    expect(exists.rows[0]).toEqual({ t: table, f: `${table}_claim` });
  });

  it('[W4] answers done after the owner completes, for every later claim, from any instance', async () => {
    const claim = await claimed('i:1');
    await store.complete('i:1', done(claim.token, RETENTION_MS));
    expect(await store.claim('i:1', run(LONG_LEASE_MS))).toEqual({ status: 'done' });
    const other = new PostgresIdempotencyStore(db.newPool(), { table });
    expect(await other.claim('i:1', run(LONG_LEASE_MS))).toEqual({ status: 'done' });
  });

  it('keeps one row per record, expiring with the retention passed to complete once no run keeps it', async () => {
    const claim = await claimed('i:1');
    await store.complete('i:1', done(claim.token, 123_000));
    const kept = (await row('i:1'))!;
    expect(Number(kept['ttl_ms'])).toBeGreaterThan(100_000);
    expect(Number(kept['ttl_ms'])).toBeLessThanOrEqual(123_000);
    expect(kept).toMatchObject({ run: null, done: { d: [EVENT] }, version: 1 });
  });

  it('ignores complete with a token that does not own the slot', async () => {
    const claim = await claimed('i:1');
    await store.complete('i:1', done(FOREIGN, RETENTION_MS));
    expect(await row('i:1')).toMatchObject({ run: { o: claim.token, a: 1 }, done: null, version: 0 });
    expect(await store.claim('i:1', run(LONG_LEASE_MS))).toEqual({ status: 'busy' });
  });

  it('ignores complete from an owner whose lease expired and was claimed by another delivery', async () => {
    const stale = await claimed('i:1', 100);
    const fresh = await waitFor(async () => {
      const claim = await store.claim('i:1', run(LONG_LEASE_MS));
      return claim.status === 'claimed' ? claim : undefined;
    });
    await store.complete('i:1', done(stale.token, RETENTION_MS));
    expect(await row('i:1')).toMatchObject({ run: { o: fresh.token, a: 2 }, done: null });
  });

  it('deletes expired rows in batches by the expires_at index, leaving live ones', async () => {
    const brief = new PostgresIdempotencyStore(db.pool, { table, attemptsTtlSeconds: 1 });
    for (let i = 0; i < 30; i++) {
      const claim = await brief.claim(`i:old-${i}`, run(1));
      if (claim.status === 'claimed') await brief.complete(`i:old-${i}`, done(claim.token, 1));
    }
    await claimed('i:live');
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
    expect(left.rows.map((r) => r['key'])).toEqual(['i:live']);
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
    const background = new PostgresIdempotencyStore(db.pool, {
      table,
      cleanupEvery: 5,
      cleanupBatchSize: 100,
      attemptsTtlSeconds: 1,
    });
    for (let i = 0; i < 4; i++) {
      const claim = await background.claim(`i:old-${i}`, run(1));
      if (claim.status === 'claimed') await background.complete(`i:old-${i}`, done(claim.token, 1));
    }
    await waitFor(async () =>
      Number(
        (await db.pool.query(`SELECT count(*) AS n FROM ${table} WHERE expires_at <= clock_timestamp()`)).rows[0]!['n'],
      ) === 4
        ? true
        : undefined,
    );
    await background.claim('i:fifth', run(LONG_LEASE_MS));
    await background.close(); // waits for the batch the fifth claim started
    const left = await db.pool.query(`SELECT key FROM ${table} ORDER BY key`);
    expect(left.rows.map((r) => r['key'])).toEqual(['i:fifth']);
  });

  it('rejects (so the receiver answers 503) when the database is unreachable', async () => {
    const down = new PostgresIdempotencyStore(createUnreachablePool(await deadPort()), { table });
    await expect(down.claim('i:1', run(LONG_LEASE_MS))).rejects.toThrow();
    await expect(down.complete('i:1', done(FOREIGN, RETENTION_MS))).rejects.toThrow();
    await expect(down.renew('i:1', { slot: SLOT, token: FOREIGN, leaseMs: LONG_LEASE_MS })).rejects.toThrow();
  });

  it('renew moves the lease end to the lease asked for, and the row outlives it', async () => {
    const short = new PostgresIdempotencyStore(db.pool, { table, attemptsTtlSeconds: 1 });
    const claim = await claimed('i:1', 500, short);
    const before = Date.now();
    expect(await short.renew('i:1', { slot: SLOT, token: claim.token, leaseMs: 123_000 })).toBe(true);
    const renewed = (await row('i:1'))!;
    const lease = renewed['run'] as { o: string; u: number; a: number; k: number };
    expect(lease).toMatchObject({ o: claim.token, a: 1 });
    expect(lease.u).toBeGreaterThan(before + 100_000);
    expect(lease.k).toBeGreaterThanOrEqual(lease.u);
    expect(Number(renewed['ttl_ms'])).toBeGreaterThan(100_000);
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

  it('uses a schema that migrations created, with createTable: false', async () => {
    await db.pool.query('CREATE SCHEMA IF NOT EXISTS billing');
    await db.pool.query(postgresIdempotencyStoreSchema('billing.claims'));
    const migrated = new PostgresIdempotencyStore(db.pool, { table: 'billing.claims', createTable: false });
    expect(await migrated.claim('i:1', run(LONG_LEASE_MS))).toMatchObject({ status: 'claimed', attempt: 1 });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM billing.claims')).rows[0]!['n']).toBe(1);
  });

  it("refuses a table of 0.1.0's layout by name (503, nothing written), pointing at the migration", async () => {
    await db.pool.query(
      `CREATE TABLE ${table} (key text PRIMARY KEY, owner uuid, lease_until timestamptz, attempt integer NOT NULL, done boolean NOT NULL DEFAULT false, expires_at timestamptz NOT NULL)`,
    );
    await expect(store.claim('i:1', run(LONG_LEASE_MS))).rejects.toThrow(
      /has the layout of nestjs-payments 0\.1\.0 .*migrate it as docs\/custom-store\.md#upgrading-from-010 shows/,
    );
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!['n']).toBe(0);
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
        const claim = await claimed('i:p', LONG_LEASE_MS, own);
        expect(await own.renew('i:p', { slot: SLOT, token: claim.token, leaseMs: LONG_LEASE_MS })).toBe(true);
        await own.complete('i:p', done(claim.token, RETENTION_MS));
        expect(await own.claim('i:p', run(LONG_LEASE_MS))).toEqual({ status: 'done' });
        // pg_prepared_statements lists this session's own statements only.
        const names = await client.query('SELECT name FROM pg_prepared_statements ORDER BY name');
        await db.pool.query(`DELETE FROM ${table}`);
        return names.rows.map((r) => String(r['name']).replace(/_[0-9a-f]{16}$/, ''));
      } finally {
        client.release();
      }
    };
    expect(await prepared({})).toEqual(['payments_idem_claim', 'payments_idem_complete', 'payments_idem_renew']);
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
  /** Which function each statement called: `claim`, `claim_many`, `complete`, `complete_many`, ... */
  const kinds = (sent: string[]): string[] =>
    sent.map((text) => /_(claim_many|claim|complete_many|complete|release|renew)\b/.exec(text)![1]!);

  it('sends the claims and the completions of one event-loop turn as one statement each', async () => {
    const { pool, sent } = recordingPool();
    const batched = new PostgresIdempotencyStore(pool, { table });
    await batched.claim('i:warm-up', run(LONG_LEASE_MS)); // creates the schema
    sent.length = 0;
    const keys = Array.from({ length: 20 }, (_, i) => `i:evt-${i}`);
    const claims = await Promise.all(keys.map((key) => batched.claim(key, run(LONG_LEASE_MS))));
    expect(claims.map((c) => (c.status === 'claimed' ? c.attempt : c.status))).toEqual(keys.map(() => 1));
    expect(kinds(sent)).toEqual(['claim_many']);
    sent.length = 0;
    await Promise.all(
      claims.map((claim, i) =>
        claim.status === 'claimed' ? batched.complete(keys[i]!, done(claim.token, RETENTION_MS)) : undefined,
      ),
    );
    expect(kinds(sent)).toEqual(['complete_many']);
    const completed = await db.pool.query(
      `SELECT count(*)::int AS n FROM ${table} WHERE version = 1 AND key LIKE 'i:evt-%'`,
    );
    expect(completed.rows[0]!['n']).toBe(20);
    // Every later claim, batched again, reads done.
    expect((await Promise.all(keys.map((key) => batched.claim(key, run(LONG_LEASE_MS))))).map((c) => c.status)).toEqual(
      keys.map(() => 'done'),
    );
  });

  it('[W4] grants one claim when one turn asks for the same slot twice, and takes two slots of one record in one statement', async () => {
    const { pool, sent } = recordingPool();
    const batched = new PostgresIdempotencyStore(pool, { table });
    await batched.claim('i:warm-up', run(LONG_LEASE_MS));
    sent.length = 0;
    const claims = await Promise.all([
      batched.claim('i:a', run(LONG_LEASE_MS)),
      batched.claim('i:b', run(LONG_LEASE_MS)),
      batched.claim('i:a', run(LONG_LEASE_MS)),
      batched.claim('i:a', { slot: 'succeeded|Other.h', eventId: EVENT, leaseMs: LONG_LEASE_MS }),
    ]);
    expect(claims.map((c) => c.status)).toEqual(['claimed', 'claimed', 'busy', 'claimed']);
    expect(kinds(sent)).toEqual(['claim_many']);
  });

  it('completes only the calls whose token owns the slot, within one batch', async () => {
    const batched = new PostgresIdempotencyStore(db.pool, { table });
    const [first, second] = await Promise.all([
      claimed('i:1', LONG_LEASE_MS, batched),
      claimed('i:2', LONG_LEASE_MS, batched),
    ]);
    await Promise.all([
      batched.complete('i:1', done(first.token, RETENTION_MS)),
      batched.complete('i:2', done(FOREIGN, RETENTION_MS)),
    ]);
    expect(await row('i:1')).toMatchObject({ run: null, version: 1 });
    expect(await row('i:2')).toMatchObject({ run: { o: second.token }, version: 0 });
  });

  it('rejects every call of a batch when its statement fails (the receiver answers 503 to each)', async () => {
    const batched = new PostgresIdempotencyStore(createUnreachablePool(await deadPort()), {
      table,
      createTable: false,
    });
    const results = await Promise.allSettled(
      ['i:1', 'i:2', 'i:3'].map((key) => batched.claim(key, run(LONG_LEASE_MS))),
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });

  it('sends one statement per call with batchStatements: false, and refuses a value that is not a boolean', async () => {
    const { pool, sent } = recordingPool();
    const single = new PostgresIdempotencyStore(pool, { table, batchStatements: false });
    await single.claim('i:warm-up', run(LONG_LEASE_MS));
    sent.length = 0;
    await Promise.all(['i:1', 'i:2', 'i:3'].map((key) => single.claim(key, run(LONG_LEASE_MS))));
    expect(kinds(sent)).toEqual(['claim', 'claim', 'claim']);
    expect(() => new PostgresIdempotencyStore(db.pool, { table, batchStatements: 1 as unknown as boolean })).toThrow(
      /PostgresIdempotencyStore batchStatements/,
    );
  });
});
