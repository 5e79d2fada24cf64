import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Where the PostgreSQL suites connect (`PG_URL`, default the local server, trust auth). */
export const PG_ADMIN_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database created for one suite and dropped after it. */
export interface TestDatabase {
  name: string;
  url: string;
  /** A pool on the database (max 10); `drop()` ends it. */
  pool: pg.Pool;
  /** Ends every pool made by `newPool`, then drops the database. */
  drop(): Promise<void>;
  /** Another pool on the same database (ended by `drop`). */
  newPool(options?: pg.PoolConfig): pg.Pool;
}

function urlOf(database: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Creates `payments_test_<label>_<random>`; no two suites (or runs) share one. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `payments_test_${label}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = urlOf(name);
  const pools: pg.Pool[] = [];
  const newPool = (options: pg.PoolConfig = {}): pg.Pool => {
    const pool = new pg.Pool({ connectionString: url, max: 10, ...options });
    // A terminated backend (outage tests) must not crash the test process.
    pool.on('error', () => undefined);
    pools.push(pool);
    return pool;
  };
  const pool = newPool();
  return {
    name,
    url,
    pool,
    newPool,
    async drop() {
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
      const client = new pg.Client({ connectionString: PG_ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A pool to a port where nothing listens: every query rejects at once (a database outage). */
export function createUnreachablePool(port: number): pg.Pool {
  const pool = new pg.Pool({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: 2000,
    max: 2,
  });
  pool.on('error', () => undefined);
  return pool;
}

export { deadPort, waitFor } from '../redis-test.util.js';
