/**
 * The hand-written inbox (issue 31, item 2): what an expert writes with `pg` for an exactly-once
 * handler, no library. One transaction per delivery on a client of the pool: `BEGIN` sent in the same
 * exchange as the first statement (the dedupe row, prepared), then the effect (the same ledger INSERT as
 * ours, prepared), then `COMMIT`: 3 round trips. A delivery seen before inserts no row and commits
 * nothing else. The anchor of `ours-express-inbox`.
 */
import { BENCH_LEDGER_INSERT } from './postgres-bench.js';

export const HAND_INBOX_SQL =
  'CREATE TABLE IF NOT EXISTS hand_inbox (event_id text PRIMARY KEY, received_at timestamptz NOT NULL DEFAULT now())';
const DEDUPE = {
  name: 'hand_inbox_insert',
  text: 'INSERT INTO hand_inbox (event_id) VALUES ($1) ON CONFLICT DO NOTHING',
};
const EFFECT = BENCH_LEDGER_INSERT;

/**
 * `BEGIN` and a prepared statement in one write and one answer (pg's own Query, its `prepare` extended by
 * an unnamed BEGIN; the first use on a connection parses the statement, so BEGIN goes alone then).
 */
function beginAnd(client, statement) {
  const Query = client.constructor.Query;
  if (client.connection?.parsedStatements?.[statement.name] !== statement.text)
    return client.query('BEGIN').then(() => client.query(statement));
  return new Promise((resolve, reject) => {
    const query = new Query(statement, undefined, (error, result) => (error ? reject(error) : resolve(result)));
    const prepare = query.prepare;
    const complete = query.handleCommandComplete;
    let begun = false;
    query.prepare = function (connection) {
      connection.parse({ text: 'BEGIN', name: '' });
      connection.bind({ portal: '', statement: '', values: [] });
      connection.execute({ portal: '' });
      prepare.call(this, connection);
    };
    query.handleCommandComplete = function (message, connection) {
      if (begun) complete.call(this, message, connection);
      begun = true;
    };
    client.query(query);
  });
}

/** Runs the delivery's transaction; resolves true when the event was new (the effect ran), false for a duplicate. */
export async function handInbox(pool, eventId) {
  const client = await pool.connect();
  let broken;
  try {
    const inserted = await beginAnd(client, { ...DEDUPE, values: [eventId] });
    if (inserted.rowCount === 1) await client.query({ ...EFFECT, values: [eventId, 100] });
    await client.query('COMMIT');
    return inserted.rowCount === 1;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}
