/**
 * PostgreSQL for the `ours-express-postgres` and `ours-express-inbox` scenarios (used by lib/ours-app.js):
 * a database of its own (`payments_bench_<pid>_<time>`, created here, dropped by the cleanup), a pool
 * whose clients count every SQL statement they send, and the `extra` report of statements per delivery.
 * PostgreSQL at PG_URL (default postgres://postgres@127.0.0.1:5432/postgres, trust auth).
 */
import pg from 'pg';

const ADMIN_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The ledger of the inbox scenario's handler: a plain INSERT per delivery. */
export const BENCH_LEDGER_SQL =
  'CREATE TABLE IF NOT EXISTS bench_ledger (id bigserial PRIMARY KEY, event_id text NOT NULL, amount integer NOT NULL)';

/** The effect of every inbox scenario's handler, ours and the hand-written one: a prepared INSERT. */
export const BENCH_LEDGER_INSERT = {
  name: 'hand_ledger_insert',
  text: 'INSERT INTO bench_ledger (event_id, amount) VALUES ($1, $2)',
};

/**
 * Creates the database and a counting pool. `counts.statements` is every `client.query` (pool.query
 * goes through one too: no double count); `counts.deliveries` is bumped by the caller per handler run.
 * Both count from the process start (never reset), so their quotient is statements per delivery; the
 * one-off schema statements are a handful over tens of thousands of deliveries.
 */
export async function createBenchDatabase(runId) {
  const name = `payments_bench_${runId.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`.slice(0, 63);
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const counts = { statements: 0, deliveries: 0 };
  const pool = new pg.Pool({ connectionString: url.toString(), max: 10 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    const query = client.query.bind(client);
    client.query = (...args) => {
      counts.statements++;
      return query(...args);
    };
  });
  return {
    pool,
    counts,
    extra: async () => {
      const report = {
        sqlStatements: counts.statements,
        deliveries: counts.deliveries,
        sqlPerDelivery: counts.deliveries > 0 ? Math.round((counts.statements / counts.deliveries) * 100) / 100 : null,
      };
      // The PostgreSQL backends serving this database (this process's connections): whose CPU the parent counts.
      const { rows } = await pool.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
      return { ...report, enginePids: rows.map((row) => Number(row.pid)) };
    },
    async drop() {
      await pool.end().catch(() => undefined);
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
