/**
 * The statements of `PostgresIdempotencyStore` on table `t` (already quoted). Time is PostgreSQL's
 * `clock_timestamp()`, so instances with skewed clocks agree on every lease and expiry.
 */
export function postgresIdempotencySql(
  t: string,
): Readonly<Record<'claim' | 'state' | 'complete' | 'release' | 'renew' | 'deleteExpired', string>> {
  const now = 'clock_timestamp()';
  return {
    // $1 key, $2 token, $3 lease ms, $4 state ttl ms. A row counts as absent once expired.
    claim: `INSERT INTO ${t} AS s (key, owner, lease_until, attempt, done, expires_at)
VALUES ($1, $2, ${now} + $3::float8 * interval '1 millisecond', 1, false, ${now} + $4::float8 * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET
  owner = EXCLUDED.owner,
  lease_until = EXCLUDED.lease_until,
  attempt = CASE WHEN s.expires_at <= ${now} THEN 1 ELSE s.attempt + 1 END,
  done = false,
  expires_at = EXCLUDED.expires_at
WHERE s.expires_at <= ${now} OR (NOT s.done AND (s.lease_until IS NULL OR s.lease_until <= ${now}))
RETURNING attempt`,
    state: `SELECT done FROM ${t} WHERE key = $1 AND expires_at > ${now}`,
    // $1 key, $2 token, $3 retention ms.
    complete: `UPDATE ${t} SET done = true, owner = NULL, lease_until = NULL, expires_at = ${now} + $3::float8 * interval '1 millisecond'
WHERE key = $1 AND owner = $2 AND NOT done AND expires_at > ${now}`,
    release: `UPDATE ${t} SET owner = NULL, lease_until = NULL WHERE key = $1 AND owner = $2 AND NOT done`,
    // $1 key, $2 token, $3 lease ms. The row outlives the lease it extends.
    renew: `UPDATE ${t} SET lease_until = ${now} + $3::float8 * interval '1 millisecond',
  expires_at = GREATEST(expires_at, ${now} + $3::float8 * interval '1 millisecond')
WHERE key = $1 AND owner = $2 AND NOT done AND expires_at > ${now}`,
    // $1 batch size. The sub-select walks the expires_at index from its oldest end.
    deleteExpired: `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE expires_at <= ${now} ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
  };
}
