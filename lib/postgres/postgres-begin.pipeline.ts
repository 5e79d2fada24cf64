import type { PostgresPoolClient, PostgresQueryResult } from './postgres-sql.util.js';

/** The part of node-postgres' connection that a query writes its protocol messages to. */
interface PgConnection {
  parsedStatements: Record<string, string>;
  parse(message: { text: string; name: string }): void;
  bind(message: { portal: string; statement: string; values: unknown[] }): void;
  execute(message: { portal: string }): void;
}

/** node-postgres' own `Query` class (`Client.Query`), as far as this uses it. */
interface PgQuery {
  prepare(connection: PgConnection): void;
  handleCommandComplete(message: unknown, connection: PgConnection): void;
}
type PgQueryClass = new (
  config: { name: string; text: string; values: unknown[] },
  values: undefined,
  callback: (error: Error | null, result: PostgresQueryResult) => void,
) => PgQuery;

/**
 * Sends `begin` and the named prepared statement `name` (`text`, `values`) in one exchange: one write
 * (`Parse`/`Bind`/`Execute` of the unnamed `begin`, then `Bind`/`Describe`/`Execute` of the prepared
 * statement, then one `Sync`), one answer. Same semantics as `BEGIN`, then the statement: inside one
 * `Sync`, an error in `begin` skips the statement, and an error in the statement leaves the opened
 * transaction aborted (the caller rolls back as after any failed statement).
 *
 * Only for a node-postgres `Client` (pure JavaScript; `pg-native` has no such class) on which the
 * statement is already parsed: the first use on a connection goes as two exchanges, `begin` then the
 * statement (so that a failing `Parse` of the statement is never mixed with `begin`). Answers
 * `undefined` when it cannot send them together; the caller then sends them one after the other.
 */
export function queryAfterBegin(
  client: PostgresPoolClient,
  begin: string,
  prepared: { name: string; text: string; values: unknown[] },
): Promise<PostgresQueryResult> | undefined {
  const pgClient = client as unknown as {
    connection?: Partial<PgConnection>;
    constructor?: { Query?: PgQueryClass };
    query(query: PgQuery): unknown;
  };
  const Query = pgClient.constructor?.Query;
  const connection = pgClient.connection;
  if (
    typeof Query !== 'function' ||
    typeof Query.prototype?.prepare !== 'function' ||
    typeof connection?.parse !== 'function' ||
    connection.parsedStatements?.[prepared.name] !== prepared.text
  ) {
    return undefined;
  }
  return new Promise<PostgresQueryResult>((resolve, reject) => {
    const query = new Query({ ...prepared }, undefined, (error, result) => (error ? reject(error) : resolve(result)));
    const prepare = query.prepare;
    const commandComplete = query.handleCommandComplete;
    let beginAnswered = false;
    // Written in the same corked write as the statement's own messages (Query.submit corks around prepare).
    query.prepare = function (this: PgQuery, conn: PgConnection): void {
      // Unnamed: its ParseComplete marks the (already parsed) named statement as parsed again, a no-op.
      conn.parse({ text: begin, name: '' });
      conn.bind({ portal: '', statement: '', values: [] });
      conn.execute({ portal: '' });
      prepare.call(this, conn);
    };
    // The first CommandComplete is the BEGIN's: not a result of the statement.
    query.handleCommandComplete = function (this: PgQuery, message: unknown, conn: PgConnection): void {
      if (!beginAnswered) {
        beginAnswered = true;
        return;
      }
      commandComplete.call(this, message, conn);
    };
    pgClient.query(query);
  });
}
