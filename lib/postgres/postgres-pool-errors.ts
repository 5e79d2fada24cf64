import { Logger } from '@nestjs/common';

/** The part of a node-postgres `Pool` (an EventEmitter) that `watchPostgresPoolErrors` needs. */
interface PoolEvents {
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'connect', listener: (client: unknown) => void): unknown;
}

/** At most one line per pool in this window; the lines left out are counted in the next one. */
const LOG_WINDOW_MS = 30_000;
const watched = new WeakSet<object>();
const logger = new Logger('PaymentsPostgres');

/**
 * Keeps a PostgreSQL restart (or `pg_terminate_backend`, a failover, an idle timeout on a proxy) from
 * killing the process: node-postgres emits `'error'` on the pool when an idle pooled connection ends,
 * and on a checked-out client when its connection ends between two statements (e.g. inside an ORM's
 * transaction), and an `'error'` event with no listener is an uncaught exception. This attaches one
 * listener per pool (whoever else listens too) and one per client of the pool, already connected or
 * connected from now on; the
 * pool itself drops the dead connection and opens a new one when asked. Logged as a warning, at most
 * one line per pool every 30 s, with the SQLSTATE and the server's message (no connection string).
 * Anything that is not an EventEmitter (a `Client`-like double in tests) is left alone.
 */
export function watchPostgresPoolErrors(pool: unknown): void {
  if (pool === null || typeof pool !== 'object' || typeof (pool as { on?: unknown }).on !== 'function') return;
  if (watched.has(pool)) return;
  watched.add(pool);
  let windowEnds = 0;
  let left = 0;
  const onError = (error: Error): void => {
    const now = Date.now();
    if (now < windowEnds) {
      left += 1;
      return;
    }
    windowEnds = now + LOG_WINDOW_MS;
    const code = (error as { code?: unknown }).code;
    const more = left > 0 ? ` (${left} more since the last line)` : '';
    left = 0;
    logger.warn(
      `A PostgreSQL connection of the pool ended${typeof code === 'string' ? ` (${code})` : ''}: ${String(error?.message).slice(0, 200)}. ` +
        `The pool drops it and connects again when needed${more}.`,
    );
  };
  const events = pool as PoolEvents;
  const watchClient = (client: unknown): void => {
    if (client !== null && typeof client === 'object' && typeof (client as { on?: unknown }).on === 'function') {
      (client as PoolEvents).on('error', onError);
    }
  };
  events.on('error', onError);
  events.on('connect', watchClient);
  // Clients the pool connected before (e.g. the app's own query at boot) are watched too: pg-pool keeps
  // them in `_clients` (pg-pool 2 and 3); checked out later by an ORM, their end would crash the process.
  const existing = (pool as { _clients?: unknown })._clients;
  if (Array.isArray(existing)) for (const client of existing) watchClient(client);
}

/**
 * True for an error that says the connection ended, not the statement: the server ended the backend
 * (SQLSTATE class 57P, e.g. 57P01 after `pg_terminate_backend` or a shutdown), a connection exception
 * (class 08), or node-postgres on a socket that closed (`Connection terminated`, `not queryable`). A
 * pooled connection that the server ended while it sat idle can be handed out before node-postgres has
 * read the end: the statement sent on it never ran, and one more try on another connection is safe
 * where the statement can be repeated (the store's token-guarded statements; a transaction whose
 * handler has not started). An ORM's wrapper is looked through: Drizzle's `DrizzleQueryError` (and
 * any error built with `{ cause }`) carries the driver's error as its `cause`, up to 4 levels deep.
 */
export function isConnectionEnded(error: unknown): boolean {
  for (let depth = 0; depth < 5 && error !== null && typeof error === 'object'; depth++) {
    if (endsConnection(error)) return true;
    error = (error as { cause?: unknown }).cause;
  }
  return false;
}

function endsConnection(error: object): boolean {
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (code.startsWith('57P') || code.startsWith('08') || code === 'ECONNRESET' || code === 'EPIPE')
  )
    return true;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && /Connection terminated|not queryable/.test(message);
}

/**
 * How many more tries a statement gets when its connection had ended: every idle connection of the
 * pool may have ended at once (a restart, a failover, `pg_terminate_backend`), and the pool hands them
 * out one by one until it has read each end, so one more try than the pool keeps idle, at most 11
 * (node-postgres' default pool of 10, plus a new connection). Where the pool is not known, 10.
 */
export function endedConnectionRetries(pool?: unknown): number {
  const idle = (pool as { idleCount?: unknown } | undefined)?.idleCount;
  return typeof idle === 'number' && Number.isInteger(idle) && idle >= 0 ? Math.min(idle, 10) + 1 : 10;
}
