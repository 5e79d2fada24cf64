import type { IntentWatchStore, WatchedIntent, WatchedIntentKind } from '../contracts/intent-watch-store.interface.js';
import type { RedisScriptClient } from './redis-script-client.interface.js';

// Every key of one instance's list carries one hash tag ({watch}, or {watch:<instance>} for a named
// instance): one slot, so the scripts run on a Redis Cluster too.
const WATCH = `local added = redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
if added == 1 then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
return added`;
const DUE = `local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
local out = {}
for _, id in ipairs(ids) do
  local data = redis.call('HGET', KEYS[2], id)
  if data then table.insert(out, id); table.insert(out, data); table.insert(out, redis.call('ZSCORE', KEYS[1], id)) end
end
return out`;
const RESCHEDULE = `local data = redis.call('HGET', KEYS[2], ARGV[1])
if not data then return 0 end
local intent = cjson.decode(data)
intent['checks'] = tonumber(ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(intent))
redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[1])
return 1`;
const LEASE = `local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

/**
 * The reconciler's watch list on Redis (single node or Cluster), beside `RedisIdempotencyStore`: a
 * sorted set by next check time, a hash of the intents, and the sweeper lease (`SET ... PX`, timed by
 * Redis). Give it the same client; `keyPrefix` defaults to `'payments:'`. A named module instance
 * (`instance`) has a list and a lease of its own: `<keyPrefix>{watch:<instance>}:due`, `:intents`, `:lease`.
 */
export class RedisIntentWatchStore implements IntentWatchStore {
  readonly #due: string;
  readonly #data: string;
  readonly #lease: string;

  constructor(
    private readonly redis: RedisScriptClient,
    options: { keyPrefix?: string; instance?: string } = {},
  ) {
    const tag = options.instance === undefined ? 'watch' : `watch:${options.instance}`;
    const prefix = `${options.keyPrefix ?? 'payments:'}{${tag}}`;
    this.#due = `${prefix}:due`;
    this.#data = `${prefix}:intents`;
    this.#lease = `${prefix}:lease`;
  }

  async watch(intent: WatchedIntent): Promise<void> {
    const data = JSON.stringify({ kind: intent.kind, createdAt: intent.createdAt, checks: intent.checks });
    await this.redis.eval(WATCH, 2, this.#due, this.#data, intent.id, intent.nextCheckAt, data);
  }

  async due(now: number, limit: number): Promise<WatchedIntent[]> {
    const reply = (await this.redis.eval(DUE, 2, this.#due, this.#data, now, limit)) as string[];
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
    await this.redis.eval(RESCHEDULE, 2, this.#due, this.#data, id, nextCheckAt, checks);
  }

  async forget(id: string): Promise<void> {
    await this.redis.eval(
      "redis.call('ZREM', KEYS[1], ARGV[1]); redis.call('HDEL', KEYS[2], ARGV[1]); return 1",
      2,
      this.#due,
      this.#data,
      id,
    );
  }

  async lease(owner: string, ms: number): Promise<boolean> {
    return (await this.redis.eval(LEASE, 1, this.#lease, owner, Math.max(1, Math.round(ms)))) === 1;
  }

  async list(): Promise<WatchedIntent[]> {
    return this.due(Number.MAX_SAFE_INTEGER, 10_000);
  }
}
