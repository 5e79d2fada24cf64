import type { IntentWatchStore, WatchedIntent, WatchedIntentKind } from '../contracts/intent-watch-store.interface.js';
import { intentRecordKey } from '../records/record-keys.js';
import { RECORD_SCRIPTS, type LuaScript } from './redis-record.scripts.js';
import type { RedisScriptClient } from './redis-script-client.interface.js';

// The due index of one instance's list: every key carries one hash tag ({watch}, or {watch:<instance>}
// for a named instance), so the index scripts run on a Redis Cluster too. KEYS: fresh (never checked
// yet: read first, so a new intent never waits behind a backlog), due (the others).
const INDEX_ADD = `if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('ZADD', ARGV[3] == '0' and KEYS[1] or KEYS[2], ARGV[2], ARGV[1]) return 1`;
const INDEX_MOVE = `redis.call('ZREM', KEYS[1], ARGV[1]) redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1]) return 1`;
const INDEX_REMOVE = `for i = 1, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) redis.call('ZREM', KEYS[2], ARGV[i]) end return 1`;
// Fresh first, then the rest, each in due order: ids and scores.
const INDEX_DUE = `local out = {}
local left = tonumber(ARGV[2])
for _, set in ipairs({KEYS[1], KEYS[2]}) do
  if left > 0 then
    local ids = redis.call('ZRANGEBYSCORE', set, '-inf', ARGV[1], 'LIMIT', 0, left)
    for i = 1, #ids do table.insert(out, ids[i]) end
    left = left - #ids
  end
end
return out`;
const LEASE = `local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

/** How the watch list runs a record script (the idempotency store's EVALSHA, with its NOSCRIPT fallback). */
type RunScript = (lua: LuaScript, key: string, args: (string | number)[]) => Promise<unknown>;

/**
 * The reconciler's watch list on Redis (single node or Cluster), kept by `RedisIdempotencyStore`: the
 * truth is the intent's record (its `w` field: watched, kind, creation, next check, checks), which the
 * completion of a terminal state's run clears in the same script; beside it, a due index per instance
 * (`<keyPrefix>{watch}:fresh` and `:due`, sorted sets by next check) and the sweeper lease
 * (`<keyPrefix>{watch}:lease`, `SET ... PX`, timed by Redis). The index lives in another slot than the
 * records: an entry whose record is no longer watched is dropped by the sweep that reads it. A named
 * module instance (`instance`) has its own index and lease, `<keyPrefix>{watch:<instance>}:...`, and its
 * records under its own name.
 */
export class RedisIntentWatchStore implements IntentWatchStore {
  readonly inRecords = true;
  readonly #fresh: string;
  readonly #due: string;
  readonly #lease: string;
  readonly #recordPrefix: string;
  readonly #keyPrefix: string;
  readonly #watchTtlMs: number;
  readonly #run: RunScript;

  constructor(
    private readonly redis: RedisScriptClient,
    options: { keyPrefix?: string; instance?: string; watchTtlMs?: number; run?: RunScript } = {},
  ) {
    const keyPrefix = options.keyPrefix ?? 'payments:idem:';
    const tag = options.instance === undefined ? 'watch' : `watch:${options.instance}`;
    const index = `${keyPrefix}{${tag}}`;
    this.#fresh = `${index}:fresh`;
    this.#due = `${index}:due`;
    this.#lease = `${index}:lease`;
    this.#keyPrefix = keyPrefix;
    this.#recordPrefix = options.instance === undefined ? '' : `${options.instance}:`;
    this.#watchTtlMs = options.watchTtlMs ?? 8 * 86_400_000;
    this.#run = options.run ?? ((lua, key, args) => this.redis.eval(lua.source, 1, key, ...args));
  }

  /** Indexed first, then marked in its record: an index entry whose record says nothing is dropped by the sweep. */
  async watch(intent: WatchedIntent): Promise<void> {
    await this.redis.eval(INDEX_ADD, 2, this.#fresh, this.#due, intent.id, intent.nextCheckAt, intent.checks);
    await this.#run(RECORD_SCRIPTS.watch, this.#record(intent.id), [
      intent.kind,
      intent.createdAt,
      intent.nextCheckAt,
      intent.checks,
      this.#watchTtlMs,
    ]);
  }

  async due(now: number, limit: number): Promise<WatchedIntent[]> {
    const ids = [...new Set((await this.redis.eval(INDEX_DUE, 2, this.#fresh, this.#due, now, limit)) as string[])];
    if (ids.length === 0) return [];
    const watches = await Promise.all(ids.map((id) => this.#run(RECORD_SCRIPTS.watched, this.#record(id), [])));
    const out: WatchedIntent[] = [];
    const stale: string[] = [];
    ids.forEach((id, i) => {
      const watch = watches[i];
      if (typeof watch !== 'string') return void stale.push(id);
      const [kind, createdAt, nextCheckAt, checks] = watch.split('|');
      out.push({
        id,
        kind: kind as WatchedIntentKind,
        createdAt: Number(createdAt),
        nextCheckAt: Number(nextCheckAt),
        checks: Number(checks),
      });
    });
    // Repaired here: a record whose watch ended (its terminal state completed) leaves its entry behind.
    if (stale.length > 0) await this.redis.eval(INDEX_REMOVE, 2, this.#fresh, this.#due, ...stale);
    return out;
  }

  async reschedule(id: string, nextCheckAt: number, checks: number): Promise<void> {
    const watched = await this.#run(RECORD_SCRIPTS.reschedule, this.#record(id), [nextCheckAt, checks]);
    if (watched === 1) await this.redis.eval(INDEX_MOVE, 2, this.#fresh, this.#due, id, nextCheckAt);
    else await this.redis.eval(INDEX_REMOVE, 2, this.#fresh, this.#due, id);
  }

  async forget(id: string): Promise<void> {
    await this.#run(RECORD_SCRIPTS.unwatch, this.#record(id), []);
    await this.redis.eval(INDEX_REMOVE, 2, this.#fresh, this.#due, id);
  }

  async lease(owner: string, ms: number): Promise<boolean> {
    return (await this.redis.eval(LEASE, 1, this.#lease, owner, Math.max(1, Math.round(ms)))) === 1;
  }

  async list(): Promise<WatchedIntent[]> {
    return this.due(Number.MAX_SAFE_INTEGER, 10_000);
  }

  #record(id: string): string {
    return `${this.#keyPrefix}{${intentRecordKey(this.#recordPrefix, id)}}`;
  }
}
