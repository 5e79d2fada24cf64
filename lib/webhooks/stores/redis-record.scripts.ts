import { createHash } from 'node:crypto';
import { MAX_DONE_PER_SLOT } from '../records/run-record.js';

/*
 * The Lua scripts of `RedisIdempotencyStore`: each call of the store is one script on one key, the
 * record (a hash), so one Cluster slot by construction, and the same rules as `runRecord`'s. Time is
 * Redis's (`TIME`): processes with skewed clocks agree on every lease. Fields of a record:
 *
 * - `r:<slot>` a run claimed or released: `<owner token>|<lease end ms>|<attempts>|<keep upto ms>`
 *   (owner empty once released; `keep`: the run keeps the record that long, lease and attempt count);
 * - `d:<slot>` completed runs: `<latest completion ms>;<id>,<id>,...` (event ids, `*` for a
 *   retrieve's run no webhook matched yet; the last `MAX_DONE_PER_SLOT`);
 * - `v` runs completed, `x` until when completed runs are kept, `n` slots with an `r:` field, `K` the
 *   latest `keep` of any run;
 * - `w` the watch, `<kind>|<createdAt>|<nextCheckAt>|<checks>`, and `W` until when it keeps the record.
 *
 * The key expires at the latest of `x`, `K` (while `n` > 0) and `W` (while watched): recomputed by each
 * script that changes one of them.
 */

/** Shared by the scripts: `now` from TIME, and `expire()` setting the key's expiry from its fields. */
const PRELUDE = `
local k = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function num(field) return tonumber(redis.call('HGET', k, field) or '0') end
local function expire()
  local e = num('x')
  if num('n') > 0 then e = math.max(e, num('K')) end
  if redis.call('HEXISTS', k, 'w') == 1 then e = math.max(e, num('W')) end
  if e <= now then redis.call('DEL', k) else redis.call('PEXPIREAT', k, e) end
end
local function keep(upto)
  if upto > num('K') then redis.call('HSET', k, 'K', upto) end
end
`;

/**
 * Claim. ARGV: 1 slot, 2 event id ('' for a retrieve's run), 3 token, 4 lease ms, 5 keep ms
 * (max(lease, the store's retention)), 6 exclusive ('1'), 7 the slot's state ('' in an event's record).
 * Answers {'done'}, {'busy'} or {'claimed', attempt, version, slot, at, slot, at, ...} (the completed
 * `<state>|<handler>` slots, each with its latest completion).
 */
const CLAIM = `${PRELUDE}
local slot = ARGV[1]
local done = redis.call('HGET', k, 'd:' .. slot)
if done then
  if ARGV[2] == '' or string.sub(slot, 1, 9) ~= 'requires_' then return {'done'} end
  local at = string.find(done, ';', 1, true)
  local ids = ',' .. string.sub(done, at + 1) .. ','
  if string.find(ids, ',' .. ARGV[2] .. ',', 1, true) then return {'done'} end
  local star = string.find(ids, ',*,', 1, true)
  if star then
    ids = string.sub(ids, 1, star) .. ARGV[2] .. string.sub(ids, star + 2)
    redis.call('HSET', k, 'd:' .. slot, string.sub(done, 1, at) .. string.sub(ids, 2, -2))
    return {'done'}
  end
end
local run = redis.call('HGET', k, 'r:' .. slot)
local attempts, kept = 0, 0
if run then
  local owner, lease, a, kp = string.match(run, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if owner ~= '' and tonumber(lease) > now then return {'busy'} end
  attempts, kept = tonumber(a), tonumber(kp)
end
if ARGV[6] == '1' then
  local fields = redis.call('HGETALL', k)
  for i = 1, #fields, 2 do
    local f = fields[i]
    if string.sub(f, 1, 2) == 'r:' and f ~= 'r:' .. slot then
      local other = string.sub(f, 3)
      local bar = string.find(other, '|', 1, true)
      local state = bar and string.sub(other, 1, bar - 1) or ''
      local owner, lease = string.match(fields[i + 1], '^([^|]*)|([^|]*)|')
      if state ~= ARGV[7] and owner ~= '' and tonumber(lease) > now then return {'busy'} end
    end
  end
end
if not run then redis.call('HINCRBY', k, 'n', 1) end
local upto = math.max(kept, now + tonumber(ARGV[5]))
redis.call('HSET', k, 'r:' .. slot, ARGV[3] .. '|' .. (now + tonumber(ARGV[4])) .. '|' .. (attempts + 1) .. '|' .. upto)
keep(upto)
expire()
local version = num('v')
local out = {'claimed', attempts + 1, version}
if version > 0 then
  local fields = redis.call('HGETALL', k)
  for i = 1, #fields, 2 do
    local f = fields[i]
    if string.sub(f, 1, 2) == 'd:' and string.find(f, '|', 1, true) then
      table.insert(out, string.sub(f, 3))
      table.insert(out, string.match(fields[i + 1], '^([^;]*);'))
    end
  end
end
return out
`;

/** The owner check of complete, release and renew: the slot's run, its fields, or a return of 0. */
const OWNED = `
local slot = ARGV[1]
local run = redis.call('HGET', k, 'r:' .. slot)
if not run then return 0 end
local owner, lease, attempts, kept = string.match(run, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
if owner ~= ARGV[2] then return 0 end
`;

/** Complete. ARGV: 1 slot, 2 token, 3 event id ('' for a retrieve's run), 4 retention ms, 5 unwatch ('1'). */
const COMPLETE = `${PRELUDE}${OWNED}
redis.call('HDEL', k, 'r:' .. slot)
redis.call('HINCRBY', k, 'n', -1)
local id = ARGV[3] == '' and '*' or ARGV[3]
local done = redis.call('HGET', k, 'd:' .. slot)
local ids = id
if done then
  ids = string.sub(done, string.find(done, ';', 1, true) + 1) .. ',' .. id
  local count = select(2, string.gsub(ids, ',', ','))
  if count >= ${MAX_DONE_PER_SLOT} then ids = string.sub(ids, string.find(ids, ',', 1, true) + 1) end
end
redis.call('HSET', k, 'd:' .. slot, now .. ';' .. ids)
redis.call('HINCRBY', k, 'v', 1)
local x = now + tonumber(ARGV[4])
if x > num('x') then redis.call('HSET', k, 'x', x) end
if ARGV[5] == '1' then redis.call('HDEL', k, 'w', 'W') end
expire()
return 1
`;

/** Release. ARGV: 1 slot, 2 token, 3 keep ms (the store's retention, for the attempt count). */
const RELEASE = `${PRELUDE}${OWNED}
local upto = math.max(tonumber(kept), now + tonumber(ARGV[3]))
redis.call('HSET', k, 'r:' .. slot, '|0|' .. attempts .. '|' .. upto)
keep(upto)
expire()
return 1
`;

/** Renew. ARGV: 1 slot, 2 token, 3 lease ms. 1 = renewed, 0 = the token no longer owns the slot. */
const RENEW = `${PRELUDE}${OWNED}
local lease = now + tonumber(ARGV[3])
local upto = math.max(tonumber(kept), lease)
redis.call('HSET', k, 'r:' .. slot, owner .. '|' .. lease .. '|' .. attempts .. '|' .. upto)
keep(upto)
expire()
return 1
`;

/** Watch. ARGV: 1 kind, 2 createdAt, 3 nextCheckAt, 4 checks, 5 keep ms. 1 = now watched, 0 = it was. */
const WATCH = `${PRELUDE}
if redis.call('HEXISTS', k, 'w') == 1 then return 0 end
redis.call('HSET', k, 'w', ARGV[1] .. '|' .. ARGV[2] .. '|' .. ARGV[3] .. '|' .. ARGV[4], 'W', now + tonumber(ARGV[5]))
expire()
return 1
`;

/** The watch of a record (`<kind>|<createdAt>|<nextCheckAt>|<checks>`), or nil. */
const WATCHED = `return redis.call('HGET', KEYS[1], 'w')`;

/** Reschedule. ARGV: 1 nextCheckAt, 2 checks. 1 = rescheduled, 0 = not watched (any more). */
const RESCHEDULE = `local w = redis.call('HGET', KEYS[1], 'w')
if not w then return 0 end
local kind, created = string.match(w, '^([^|]*)|([^|]*)|')
redis.call('HSET', KEYS[1], 'w', kind .. '|' .. created .. '|' .. ARGV[1] .. '|' .. ARGV[2])
return 1`;

/** Unwatch: the record is no longer watched (its expiry falls back to its runs'). */
const UNWATCH = `${PRELUDE}
if redis.call('HDEL', k, 'w', 'W') == 0 then return 0 end
expire()
return 1
`;

export interface LuaScript {
  readonly source: string;
  readonly sha1: string;
}

const script = (source: string): LuaScript => ({ source, sha1: createHash('sha1').update(source).digest('hex') });

/** The record's scripts, each on the one key of a record. */
export const RECORD_SCRIPTS = {
  claim: script(CLAIM),
  complete: script(COMPLETE),
  release: script(RELEASE),
  renew: script(RENEW),
  watch: script(WATCH),
  watched: script(WATCHED),
  reschedule: script(RESCHEDULE),
  unwatch: script(UNWATCH),
} as const;
