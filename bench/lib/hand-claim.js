/**
 * The hand-written claim on Redis (issue 31, item 2): what an expert writes with ioredis for at-most-once
 * handling across instances, no library: the same two Lua scripts as RedisIdempotencyStore (claim, then
 * complete; keys under one `{id}` hash tag, so one Cluster slot), defined with ioredis' `defineCommand`
 * (EVALSHA, EVAL on NOSCRIPT), a random token per claim. The anchor of `ours-express-redis-cluster`.
 */
import { randomUUID } from 'node:crypto';

const CLAIM = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {'done'} end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'busy'} end
local attempt = redis.call('HINCRBY', KEYS[3], 'attempt', 1)
redis.call('HSET', KEYS[3], 'owner', ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return {'claimed', attempt}
`;
const COMPLETE = `
local lease = redis.call('GET', KEYS[2])
local owns = lease == ARGV[1] or (not lease and redis.call('HGET', KEYS[3], 'owner') == ARGV[1])
if not owns then return 0 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[3], 'owner')
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1
`;
const LEASE_MS = 60_000;
const RETENTION_MS = 259_200_000;

/** Defines the two commands on `redis` (a Redis or a Cluster); returns `claimAndRun(id, handler)`. */
export function handClaim(redis, keyPrefix) {
  redis.defineCommand('benchClaim', { numberOfKeys: 3, lua: CLAIM });
  redis.defineCommand('benchComplete', { numberOfKeys: 3, lua: COMPLETE });
  /** Runs `handler` once per id; resolves 'done' (ran now), 'duplicate' or 'busy'. */
  return async (id, handler) => {
    const base = `${keyPrefix}{${id}}`;
    const keys = [`${base}:done`, `${base}:lease`, `${base}:state`];
    const token = randomUUID();
    const [status] = await redis.benchClaim(...keys, token, LEASE_MS, Math.max(RETENTION_MS, LEASE_MS));
    if (status !== 'claimed') return status === 'done' ? 'duplicate' : 'busy';
    await handler();
    await redis.benchComplete(...keys, token, RETENTION_MS);
    return 'done';
  };
}
