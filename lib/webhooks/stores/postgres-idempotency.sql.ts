import { createHash } from 'node:crypto';
import { postgresIndexName, quotePostgresTable } from '../../postgres/postgres-sql.util.js';
import { MAX_DONE_PER_SLOT } from '../records/run-record.js';

/** Default table of `PostgresIdempotencyStore`. */
export const DEFAULT_POSTGRES_IDEMPOTENCY_TABLE = 'payments_idempotency';

/** `"billing"."payments_idempotency"` + `_claim` -> a function or table name beside it, at most 63 characters. */
export function postgresNameBeside(table: string, suffix: string, option = 'PostgresIdempotencyStore table'): string {
  const parts = table.split('.');
  const name = parts.pop()!;
  let full = `${name}${suffix}`;
  if (full.length > 63) {
    const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
    full = `${name.slice(0, 63 - suffix.length - 9)}_${hash}${suffix}`;
  }
  return quotePostgresTable([...parts, full].join('.'), option);
}

/** Milliseconds since the epoch, by PostgreSQL's clock (every instance agrees on it). */
const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * The SQL that creates the table, its indexes and its functions of `PostgresIdempotencyStore`
 * (idempotent: `IF NOT EXISTS`, `CREATE OR REPLACE`). Run it from your migrations and pass
 * `createTable: false`, or let the store run it on first use.
 *
 * One row per record (`key`: `[<instance>:]i:<intent id>`, or `[<instance>:]e:<event id>`):
 * - `runs`: the slots claimed or released, `{ "<slot>": { "o": owner token, "u": lease end ms, "a":
 *   attempts, "k": keep until ms } }` (`o` gone once released);
 * - `done`: the completed runs, `{ "<slot>": { "t": latest completion ms, "d": [event ids, "*"] } }`;
 * - `version` (runs completed), `done_until` (the completed runs' retention), `expires_at` (the latest
 *   of `done_until`, the runs' `k` and the watch's `watch_until`: the row counts as absent after it;
 *   an index on it serves the clean-up);
 * - the watch of the reconciler, null when not watched: `watch_scope` (the module instance, `''` for
 *   the unnamed one), `watch_kind`, `watch_created_ms`, `watch_next_ms`, `watch_checks`, `watch_until`,
 *   with two partial indexes by instance and next check (intents never checked first);
 * - `<table>_lease`: one sweeper lease per instance (`scope`, `owner`, `until`).
 *
 * Each call of the store is one statement: a function (`<table>_claim`, `_claim_many`, `_complete`,
 * `_complete_many`, `_release`, `_renew`) that locks the one row, applies the rules of
 * `IdempotencyStore` and writes it back; the `_many` forms take the calls of one event-loop turn and
 * lock their rows in key order, so two of them never deadlock.
 *
 * @example await pool.query(postgresIdempotencyStoreSchema('payments_idempotency'))
 */
export function postgresIdempotencyStoreSchema(table: string = DEFAULT_POSTGRES_IDEMPOTENCY_TABLE): string {
  const t = quotePostgresTable(table, 'PostgresIdempotencyStore table');
  const f = (suffix: string) => postgresNameBeside(table, suffix);
  const lease = postgresNameBeside(table, '_lease');
  const now = NOW_MS;
  // The row's expiry from its parts (done_until, the runs' keep, the watch's until).
  const expiry = (runs: string, doneUntil: string, watchUntil: string) =>
    `greatest(${doneUntil}, (SELECT to_timestamp(max((v ->> 'k')::bigint) / 1000.0) FROM jsonb_each(${runs}) AS e(s, v)), ${watchUntil})`;
  // One script, one implicit transaction: the lock keeps two processes creating it at once from
  // racing on the catalog (concurrent CREATE OR REPLACE FUNCTION fails with "tuple concurrently updated").
  return `SELECT pg_advisory_xact_lock(hashtextextended('nestjs-payments schema ' || ${`'${t.replace(/'/g, "''")}'`}, 0));
CREATE TABLE IF NOT EXISTS ${t} (
  key text PRIMARY KEY,
  runs jsonb NOT NULL DEFAULT '{}',
  done jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL DEFAULT 0,
  done_until timestamptz,
  expires_at timestamptz NOT NULL,
  watch_scope text,
  watch_kind text,
  watch_created_ms bigint,
  watch_next_ms bigint,
  watch_checks integer,
  watch_until timestamptz
);
CREATE INDEX IF NOT EXISTS ${postgresIndexName(table, '_expires_at_idx')} ON ${t} (expires_at);
CREATE INDEX IF NOT EXISTS ${postgresIndexName(table, '_watch_fresh_idx')} ON ${t} (watch_scope, watch_next_ms) WHERE watch_next_ms IS NOT NULL AND watch_checks = 0;
CREATE INDEX IF NOT EXISTS ${postgresIndexName(table, '_watch_due_idx')} ON ${t} (watch_scope, watch_next_ms) WHERE watch_next_ms IS NOT NULL AND watch_checks > 0;
CREATE TABLE IF NOT EXISTS ${lease} (
  scope text PRIMARY KEY,
  owner text NOT NULL,
  until timestamptz NOT NULL
);
CREATE OR REPLACE FUNCTION ${f('_claim')}(p_key text, p_slot text, p_event text, p_token text, p_lease bigint, p_keep bigint, p_exclusive boolean)
RETURNS TABLE (status text, attempt integer, version integer, handled jsonb)
LANGUAGE plpgsql AS $fn$
DECLARE
  now_ms bigint := ${now};
  r ${t}%ROWTYPE;
  ids jsonb;
  run jsonb;
  n integer;
BEGIN
  SELECT * INTO r FROM ${t} AS x WHERE x.key = p_key FOR UPDATE;
  IF FOUND AND r.expires_at <= clock_timestamp() THEN
    DELETE FROM ${t} AS x WHERE x.key = p_key;
    r := NULL;
  END IF;
  IF r.key IS NULL THEN
    INSERT INTO ${t} AS x (key, runs, expires_at)
    VALUES (p_key, jsonb_build_object(p_slot, jsonb_build_object('o', p_token, 'u', now_ms + p_lease, 'a', 1, 'k', now_ms + p_keep)), to_timestamp((now_ms + p_keep) / 1000.0))
    ON CONFLICT (key) DO NOTHING;
    IF FOUND THEN
      RETURN QUERY SELECT 'claimed'::text, 1, 0, NULL::jsonb;
      RETURN;
    END IF;
    -- Inserted by a concurrent claim that has committed since: decide on its row.
    SELECT * INTO r FROM ${t} AS x WHERE x.key = p_key FOR UPDATE;
  END IF;
  ids := r.done -> p_slot -> 'd';
  IF ids IS NOT NULL THEN
    IF p_event IS NULL OR NOT starts_with(p_slot, 'requires_') OR ids ? p_event THEN
      RETURN QUERY SELECT 'done'::text, NULL::integer, NULL::integer, NULL::jsonb;
      RETURN;
    END IF;
    IF ids ? '*' THEN
      -- The webhook of the state a retrieve already ran: that run was this event's.
      SELECT e.i - 1 INTO n FROM jsonb_array_elements_text(ids) WITH ORDINALITY AS e(v, i) WHERE e.v = '*' LIMIT 1;
      UPDATE ${t} AS x SET done = jsonb_set(x.done, ARRAY[p_slot, 'd', n::text], to_jsonb(p_event)) WHERE x.key = p_key;
      RETURN QUERY SELECT 'done'::text, NULL::integer, NULL::integer, NULL::jsonb;
      RETURN;
    END IF;
  END IF;
  run := r.runs -> p_slot;
  IF run ? 'o' AND (run ->> 'u')::bigint > now_ms THEN
    RETURN QUERY SELECT 'busy'::text, NULL::integer, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  IF p_exclusive AND EXISTS (
    SELECT 1 FROM jsonb_each(r.runs) AS e(s, v)
    WHERE e.s <> p_slot AND position('|' IN e.s) > 0 AND split_part(e.s, '|', 1) <> split_part(p_slot, '|', 1)
      AND e.v ? 'o' AND (e.v ->> 'u')::bigint > now_ms
  ) THEN
    RETURN QUERY SELECT 'busy'::text, NULL::integer, NULL::integer, NULL::jsonb;
    RETURN;
  END IF;
  n := coalesce((run ->> 'a')::integer, 0) + 1;
  UPDATE ${t} AS x SET
    runs = jsonb_set(x.runs, ARRAY[p_slot], jsonb_build_object('o', p_token, 'u', now_ms + p_lease, 'a', n, 'k', greatest(coalesce((run ->> 'k')::bigint, 0), now_ms + p_keep))),
    expires_at = greatest(x.expires_at, to_timestamp((now_ms + p_keep) / 1000.0))
  WHERE x.key = p_key;
  RETURN QUERY SELECT 'claimed'::text, n, r.version, CASE WHEN r.version > 0 THEN (
    SELECT jsonb_object_agg(e.s, e.v -> 't') FROM jsonb_each(r.done) AS e(s, v) WHERE position('|' IN e.s) > 0
  ) END;
END
$fn$;
CREATE OR REPLACE FUNCTION ${f('_claim_many')}(p_keys text[], p_slots text[], p_events text[], p_tokens text[], p_leases bigint[], p_keeps bigint[], p_exclusive boolean[])
RETURNS TABLE (i integer, status text, attempt integer, version integer, handled jsonb)
LANGUAGE plpgsql AS $fn$
DECLARE
  j integer;
BEGIN
  -- In key order: two batches on overlapping records lock their rows in the same order, never a deadlock.
  FOR j IN SELECT u.o::integer FROM unnest(p_keys) WITH ORDINALITY AS u(k, o) ORDER BY u.k, u.o LOOP
    RETURN QUERY SELECT j, c.status, c.attempt, c.version, c.handled
      FROM ${f('_claim')}(p_keys[j], p_slots[j], p_events[j], p_tokens[j], p_leases[j], p_keeps[j], p_exclusive[j]) AS c;
  END LOOP;
END
$fn$;
CREATE OR REPLACE FUNCTION ${f('_complete')}(p_key text, p_slot text, p_token text, p_event text, p_retention bigint, p_unwatch boolean)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  now_ms bigint := ${now};
  r ${t}%ROWTYPE;
  v_ids jsonb;
  v_runs jsonb;
  v_until timestamptz;
BEGIN
  SELECT * INTO r FROM ${t} AS x WHERE x.key = p_key FOR UPDATE;
  IF NOT FOUND OR (r.runs -> p_slot ->> 'o') IS DISTINCT FROM p_token THEN
    RETURN false;
  END IF;
  v_ids := coalesce(r.done -> p_slot -> 'd', '[]'::jsonb) || to_jsonb(coalesce(p_event, '*'));
  IF jsonb_array_length(v_ids) > ${MAX_DONE_PER_SLOT} THEN
    v_ids := v_ids - 0;
  END IF;
  v_runs := r.runs - p_slot;
  v_until := greatest(r.done_until, to_timestamp((now_ms + p_retention) / 1000.0));
  IF p_unwatch THEN
    r.watch_until := NULL;
  END IF;
  UPDATE ${t} AS x SET
    runs = v_runs,
    done = jsonb_set(x.done, ARRAY[p_slot], jsonb_build_object('t', now_ms, 'd', v_ids)),
    version = x.version + 1,
    done_until = v_until,
    expires_at = ${expiry('v_runs', 'v_until', 'r.watch_until')},
    watch_scope = CASE WHEN p_unwatch THEN NULL ELSE x.watch_scope END,
    watch_kind = CASE WHEN p_unwatch THEN NULL ELSE x.watch_kind END,
    watch_created_ms = CASE WHEN p_unwatch THEN NULL ELSE x.watch_created_ms END,
    watch_next_ms = CASE WHEN p_unwatch THEN NULL ELSE x.watch_next_ms END,
    watch_checks = CASE WHEN p_unwatch THEN NULL ELSE x.watch_checks END,
    watch_until = r.watch_until
  WHERE x.key = p_key;
  RETURN true;
END
$fn$;
CREATE OR REPLACE FUNCTION ${f('_complete_many')}(p_keys text[], p_slots text[], p_tokens text[], p_events text[], p_retentions bigint[], p_unwatch boolean[])
RETURNS SETOF boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  j integer;
BEGIN
  FOR j IN SELECT u.o::integer FROM unnest(p_keys) WITH ORDINALITY AS u(k, o) ORDER BY u.k, u.o LOOP
    RETURN NEXT ${f('_complete')}(p_keys[j], p_slots[j], p_tokens[j], p_events[j], p_retentions[j], p_unwatch[j]);
  END LOOP;
END
$fn$;
CREATE OR REPLACE FUNCTION ${f('_release')}(p_key text, p_slot text, p_token text, p_keep bigint)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  now_ms bigint := ${now};
  r ${t}%ROWTYPE;
  run jsonb;
BEGIN
  SELECT * INTO r FROM ${t} AS x WHERE x.key = p_key FOR UPDATE;
  IF NOT FOUND OR (r.runs -> p_slot ->> 'o') IS DISTINCT FROM p_token THEN
    RETURN false;
  END IF;
  run := jsonb_build_object('a', (r.runs -> p_slot ->> 'a')::integer, 'k', greatest((r.runs -> p_slot ->> 'k')::bigint, now_ms + p_keep));
  UPDATE ${t} AS x SET
    runs = jsonb_set(x.runs, ARRAY[p_slot], run),
    expires_at = greatest(x.expires_at, to_timestamp((run ->> 'k')::bigint / 1000.0))
  WHERE x.key = p_key;
  RETURN true;
END
$fn$;
CREATE OR REPLACE FUNCTION ${f('_renew')}(p_key text, p_slot text, p_token text, p_lease bigint)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  now_ms bigint := ${now};
  r ${t}%ROWTYPE;
  run jsonb;
BEGIN
  SELECT * INTO r FROM ${t} AS x WHERE x.key = p_key FOR UPDATE;
  IF NOT FOUND OR (r.runs -> p_slot ->> 'o') IS DISTINCT FROM p_token THEN
    RETURN false;
  END IF;
  run := (r.runs -> p_slot) || jsonb_build_object('u', now_ms + p_lease, 'k', greatest((r.runs -> p_slot ->> 'k')::bigint, now_ms + p_lease));
  UPDATE ${t} AS x SET
    runs = jsonb_set(x.runs, ARRAY[p_slot], run),
    expires_at = greatest(x.expires_at, to_timestamp((run ->> 'k')::bigint / 1000.0))
  WHERE x.key = p_key;
  RETURN true;
END
$fn$;
CREATE OR REPLACE FUNCTION ${f('_unwatch')}(p_key text)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  r ${t}%ROWTYPE;
BEGIN
  SELECT * INTO r FROM ${t} AS x WHERE x.key = p_key FOR UPDATE;
  IF NOT FOUND OR r.watch_next_ms IS NULL THEN
    RETURN false;
  END IF;
  UPDATE ${t} AS x SET
    watch_scope = NULL, watch_kind = NULL, watch_created_ms = NULL, watch_next_ms = NULL, watch_checks = NULL, watch_until = NULL,
    expires_at = coalesce(${expiry('x.runs', 'x.done_until', 'NULL::timestamptz')}, clock_timestamp())
  WHERE x.key = p_key;
  RETURN true;
END
$fn$;`;
}

/** The statements of `PostgresIdempotencyStore` on `table` (validated). */
export interface PostgresIdempotencySql {
  /** $1 key, $2 slot, $3 event id (null: a retrieve's run), $4 token, $5 lease ms, $6 keep ms, $7 exclusive. */
  readonly claim: string;
  /** The same over arrays (the claims of one event-loop turn): rows `i` (1-based), status, attempt, version, handled. */
  readonly claimMany: string;
  /** $1 key, $2 slot, $3 token, $4 event id (null: a retrieve's run), $5 retention ms, $6 unwatch. */
  readonly complete: string;
  readonly completeMany: string;
  /** $1 key, $2 slot, $3 token, $4 keep ms. */
  readonly release: string;
  /** $1 key, $2 slot, $3 token, $4 lease ms; one row `renewed`. */
  readonly renew: string;
  /** $1 batch size. Walks the expires_at index from its oldest end, skipping rows in use. */
  readonly deleteExpired: string;
}

/** The statements of the watch list kept in the records of `table`, for one instance (`scope`). */
export interface PostgresWatchSql {
  /** $1 key, $2 scope, $3 kind, $4 createdAt, $5 nextCheckAt, $6 checks, $7 keep ms. */
  readonly watch: string;
  /** $1 scope, $2 now, $3 limit: never-checked intents first, then the rest, each in due order. */
  readonly due: string;
  /** $1 key, $2 nextCheckAt, $3 checks. */
  readonly reschedule: string;
  /** $1 key. */
  readonly forget: string;
  /** $1 scope, $2 owner, $3 ms: one row when `owner` holds the sweeper lease now. */
  readonly lease: string;
}

/** The watch list's statements on `table`. */
export function postgresWatchSql(table: string): PostgresWatchSql {
  const t = quotePostgresTable(table, 'PostgresIdempotencyStore table');
  const lease = postgresNameBeside(table, '_lease');
  const keep = `clock_timestamp() + $7::float8 * interval '1 millisecond'`;
  const expired = `x.expires_at <= clock_timestamp()`;
  const lane = (checks: string) =>
    `(SELECT ${checks === '= 0' ? 0 : 1} AS lane, key, watch_kind, watch_created_ms, watch_next_ms, watch_checks FROM ${t}
  WHERE watch_scope = $1 AND watch_checks ${checks} AND watch_next_ms <= $2 ORDER BY watch_next_ms LIMIT $3)`;
  return {
    // Watched unless it is; a row whose retention ended counts as a new record.
    watch: `INSERT INTO ${t} AS x (key, expires_at, watch_scope, watch_kind, watch_created_ms, watch_next_ms, watch_checks, watch_until)
VALUES ($1, ${keep}, $2, $3, $4, $5, $6, ${keep})
ON CONFLICT (key) DO UPDATE SET
  runs = CASE WHEN ${expired} THEN '{}'::jsonb ELSE x.runs END,
  done = CASE WHEN ${expired} THEN '{}'::jsonb ELSE x.done END,
  version = CASE WHEN ${expired} THEN 0 ELSE x.version END,
  done_until = CASE WHEN ${expired} THEN NULL ELSE x.done_until END,
  watch_scope = EXCLUDED.watch_scope, watch_kind = EXCLUDED.watch_kind, watch_created_ms = EXCLUDED.watch_created_ms,
  watch_next_ms = EXCLUDED.watch_next_ms, watch_checks = EXCLUDED.watch_checks, watch_until = EXCLUDED.watch_until,
  expires_at = greatest(x.expires_at, EXCLUDED.watch_until)
WHERE x.watch_next_ms IS NULL`,
    due: `SELECT key, watch_kind, watch_created_ms, watch_next_ms, watch_checks FROM (
${lane('= 0')}
UNION ALL
${lane('> 0')}
) AS d ORDER BY lane, watch_next_ms LIMIT $3`,
    reschedule: `UPDATE ${t} SET watch_next_ms = $2, watch_checks = $3 WHERE key = $1 AND watch_next_ms IS NOT NULL`,
    forget: `SELECT ${postgresNameBeside(table, '_unwatch')}($1) AS forgotten`,
    lease: `INSERT INTO ${lease} AS l (scope, owner, until) VALUES ($1, $2, clock_timestamp() + $3::float8 * interval '1 millisecond')
ON CONFLICT (scope) DO UPDATE SET owner = EXCLUDED.owner, until = EXCLUDED.until
WHERE l.owner = EXCLUDED.owner OR l.until <= clock_timestamp()
RETURNING owner`,
  };
}

/** The statements of the store on `table`. */
export function postgresIdempotencySql(table: string): PostgresIdempotencySql {
  const t = quotePostgresTable(table, 'PostgresIdempotencyStore table');
  const f = (suffix: string) => postgresNameBeside(table, suffix);
  return {
    claim: `SELECT status, attempt, version, handled FROM ${f('_claim')}($1, $2, $3, $4, $5, $6, $7)`,
    claimMany: `SELECT i, status, attempt, version, handled FROM ${f('_claim_many')}($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::boolean[])`,
    complete: `SELECT ${f('_complete')}($1, $2, $3, $4, $5, $6) AS completed`,
    completeMany: `SELECT * FROM ${f('_complete_many')}($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::boolean[])`,
    release: `SELECT ${f('_release')}($1, $2, $3, $4) AS released`,
    renew: `SELECT ${f('_renew')}($1, $2, $3, $4) AS renewed`,
    deleteExpired: `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE expires_at <= clock_timestamp() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
  };
}
