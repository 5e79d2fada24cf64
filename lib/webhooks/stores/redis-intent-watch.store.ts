import type { IntentWatchStore, WatchedIntent, WatchedIntentKind } from '../contracts/intent-watch-store.interface.js';
import type { RedisScriptClient } from './redis-script-client.interface.js';

// Every key of one instance's list carries one hash tag ({watch}, or {watch:<instance>} for a named
// instance): one slot, so the scripts run on a Redis Cluster too. KEYS: due (checked at least once),
// intents (hash), fresh (never checked yet: read first, so a new intent never waits behind a backlog).
const WATCH = `local added = redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
if added == 1 then redis.call('ZADD', ARGV[4] == '0' and KEYS[3] or KEYS[1], ARGV[2], ARGV[1]) end
return added`;
// Fresh first, then the rest, each in due order; a member without data (forgotten by a release that knew
// only the due set) is dropped on the way.
const DUE = `local out = {}
local left = tonumber(ARGV[2])
for _, set in ipairs({KEYS[3], KEYS[1]}) do
  if left > 0 then
    local ids = redis.call('ZRANGEBYSCORE', set, '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, left)
    for i = 1, #ids, 2 do
      local data = redis.call('HGET', KEYS[2], ids[i])
      if data then
        table.insert(out, ids[i]); table.insert(out, data); table.insert(out, ids[i + 1])
        left = left - 1
      else
        redis.call('ZREM', set, ids[i])
      end
    end
  end
end
return out`;
const RESCHEDULE = `local data = redis.call('HGET', KEYS[2], ARGV[1])
if not data then return 0 end
local intent = cjson.decode(data)
intent['checks'] = tonumber(ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(intent))
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1`;
const FORGET = `redis.call('ZREM', KEYS[1], ARGV[1]); redis.call('ZREM', KEYS[3], ARGV[1]); redis.call('HDEL', KEYS[2], ARGV[1]); return 1`;
const LEASE = `local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

/**
 * The reconciler's watch list on Redis (single node or Cluster), beside `RedisIdempotencyStore`: a
 * hash of the intents, two sorted sets by next check time (`:fresh`, never checked yet, read first; `:due`,
 * the rest), and the sweeper lease (`SET ... PX`, timed by Redis). Give it the same client; `keyPrefix`
 * defaults to `'payments:'`. A named module instance (`instance`) has a list and a lease of its own:
 * `<keyPrefix>{watch:<instance>}:due`, `:fresh`, `:intents`, `:lease`.
 */
export class RedisIntentWatchStore implements IntentWatchStore {
  readonly #due: string;
  readonly #data: string;
  readonly #fresh: string;
  readonly #lease: string;

  constructor(
    private readonly redis: RedisScriptClient,
    options: { keyPrefix?: string; instance?: string } = {},
  ) {
    const tag = options.instance === undefined ? 'watch' : `watch:${options.instance}`;
    const prefix = `${options.keyPrefix ?? 'payments:'}{${tag}}`;
    this.#due = `${prefix}:due`;
    this.#data = `${prefix}:intents`;
    this.#fresh = `${prefix}:fresh`;
    this.#lease = `${prefix}:lease`;
  }

  async watch(intent: WatchedIntent): Promise<void> {
    const data = JSON.stringify({ kind: intent.kind, createdAt: intent.createdAt, checks: intent.checks });
    await this.redis.eval(
      WATCH,
      3,
      this.#due,
      this.#data,
      this.#fresh,
      intent.id,
      intent.nextCheckAt,
      data,
      intent.checks,
    );
  }

  async due(now: number, limit: number): Promise<WatchedIntent[]> {
    const reply = (await this.redis.eval(DUE, 3, this.#due, this.#data, this.#fresh, now, limit)) as string[];
    const out: WatchedIntent[] = [];
    for (let i = 0; i + 2 < reply.length; i += 3) {
      const data = JSON.parse(reply[i + 1]!) as { kind: WatchedIntentKind; createdAt: number; checks: number };
      out.push({
        id: reply[i]!,
        kind: data.kind,
        createdAt: data.createdAt,
        checks: data.checks,
        nextCheckAt: Number(reply[i + 2]),
      });
    }
    return out;
  }

  async reschedule(id: string, nextCheckAt: number, checks: number): Promise<void> {
    await this.redis.eval(RESCHEDULE, 3, this.#due, this.#data, this.#fresh, id, nextCheckAt, checks);
  }

  async forget(id: string): Promise<void> {
    await this.redis.eval(FORGET, 3, this.#due, this.#data, this.#fresh, id);
  }

  async lease(owner: string, ms: number): Promise<boolean> {
    return (await this.redis.eval(LEASE, 1, this.#lease, owner, Math.max(1, Math.round(ms)))) === 1;
  }

  async list(): Promise<WatchedIntent[]> {
    return this.due(Number.MAX_SAFE_INTEGER, 10_000);
  }
}
