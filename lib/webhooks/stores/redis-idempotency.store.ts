import { createHash, randomUUID } from 'node:crypto';
import { PaymentsError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import { STORE_ARGUMENT_MESSAGES, unexpectedStoreReplyMessage } from '../contracts/payments-webhooks.messages.js';
import { DEFAULT_RETENTION_SECONDS } from '../../core/payments.defaults.js';
import type { IdempotencyClaim, IdempotencyStore } from '../contracts/idempotency-store.interface.js';
import { RedisIntentWatchStore } from './redis-intent-watch.store.js';
import type { RedisScriptClient } from './redis-script-client.interface.js';

export type { RedisScriptClient } from './redis-script-client.interface.js';

/** Options of `RedisIdempotencyStore`. */
export interface RedisIdempotencyStoreOptions {
  /**
   * Prefix of every key the store writes. Default `'payments:idem:'`. Give each app (or each test) its
   * own prefix when several share one Redis database; all instances of one app must use the same one.
   */
  keyPrefix?: string;
  /**
   * How long the attempt count of a key that never completes is kept, in seconds. Default
   * `DEFAULT_RETENTION_SECONDS` (3 days, the default retention). A completed key keeps it for its retention instead.
   */
  attemptsTtlSeconds?: number;
}

/*
 * Keys of one claim: KEYS[1] done marker, KEYS[2] lease (value: owner token, PX lease), KEYS[3] a hash
 * with `attempt` (claims granted) and `owner` (token of the latest claim, kept after its lease expires
 * so that an owner that overran its lease can still complete it if nobody claimed it meanwhile).
 */

/** Claim: done -> 'done'; lease held -> 'busy'; else take the lease (SET NX PX) and count the attempt. ARGV: token, lease ms, state ttl ms. */
const CLAIM_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {'done'} end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'busy'} end
local attempt = redis.call('HINCRBY', KEYS[3], 'attempt', 1)
redis.call('HSET', KEYS[3], 'owner', ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return {'claimed', attempt}
`;

/** True (in Lua) when ARGV[1] owns the claim: it holds the lease, or its lease lapsed and nobody claimed since. */
const OWNS = `
local lease = redis.call('GET', KEYS[2])
local owns = lease == ARGV[1] or (not lease and redis.call('HGET', KEYS[3], 'owner') == ARGV[1])
`;

/** Complete: only the owner marks the key done; its lease is dropped and the state follows the retention. ARGV: token, retention ms. */
const COMPLETE_SCRIPT = `${OWNS}
if not owns then return 0 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[3], 'owner')
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1
`;

/** Release: only the owner drops its lease (compare-and-delete); the attempt count stays. ARGV: token. */
const RELEASE_SCRIPT = `${OWNS}
if not owns then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HDEL', KEYS[3], 'owner')
return 1
`;

/**
 * Renew: only the owner of an unfinished claim extends its lease (compare-then-set, in one script), and
 * the state keeps at least as long as the lease. ARGV: token, lease ms. 1 = renewed, 0 = lease lost.
 */
const RENEW_SCRIPT = `${OWNS}
if not owns or redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
return 1
`;

interface LuaScript {
  source: string;
  sha1: string;
}

const script = (source: string): LuaScript => ({ source, sha1: createHash('sha1').update(source).digest('hex') });

const SCRIPTS = {
  claim: script(CLAIM_SCRIPT),
  complete: script(COMPLETE_SCRIPT),
  release: script(RELEASE_SCRIPT),
  renew: script(RENEW_SCRIPT),
} as const;

const DEFAULT_KEY_PREFIX = 'payments:idem:';

/**
 * `IdempotencyStore` on Redis, for apps that run on several instances: every instance that points at
 * the same Redis (and uses the same `keyPrefix`) shares the claims, so a handler runs once in total.
 *
 * Each claim is one Lua script (done marker check, `SET NX PX` lease, attempt counter), so concurrent
 * deliveries on any number of instances get exactly one `claimed`. `complete` and `release` act only
 * when the caller's token still owns the claim (compare-then-set / compare-and-delete), and so does
 * `renew`, which the receiver calls while a handler runs past a third of its lease; an owner whose
 * lease lapsed still owns it until another delivery claims it, as with `MemoryIdempotencyStore`. A
 * lease that expires (the process died) lets a redelivery claim again. Redis errors are never swallowed: they
 * reject, and the receiver answers 503 without running anything.
 *
 * The three keys of a claim share a `{hash tag}`, so the store also works on Redis Cluster. The client
 * is not closed by the store: it belongs to the caller.
 *
 * @example
 * const redis = new Redis(process.env.REDIS_URL);
 * PaymentsModule.forRoot({ ..., webhooks: { verifier, store: new RedisIdempotencyStore(redis) } })
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  /** Every call is one command on the client's multiplexed connection(s): two claims can go out at once. */
  readonly concurrentClaims = true;
  private readonly keyPrefix: string;
  private readonly attemptsTtlMs: number;

  constructor(
    private readonly redis: RedisScriptClient,
    options: RedisIdempotencyStoreOptions = {},
  ) {
    if (
      redis === null ||
      typeof redis !== 'object' ||
      typeof redis.evalsha !== 'function' ||
      typeof redis.eval !== 'function'
    ) {
      throw new PaymentsInvalidArgumentError('RedisIdempotencyStore', 'redis', STORE_ARGUMENT_MESSAGES.redisClient);
    }
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    const ttlSeconds = options.attemptsTtlSeconds ?? DEFAULT_RETENTION_SECONDS;
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
      throw new PaymentsInvalidArgumentError(
        'RedisIdempotencyStore',
        'attemptsTtlSeconds',
        STORE_ARGUMENT_MESSAGES.wholeSecondsAtLeastOne,
      );
    }
    this.attemptsTtlMs = ttlSeconds * 1000;
  }

  async claim(key: string, leaseMs: number): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const keys = this.keysOf(key);
    const reply = await this.run(
      SCRIPTS.claim,
      [keys.done, keys.lease, keys.state],
      [token, toMs(leaseMs), Math.max(this.attemptsTtlMs, toMs(leaseMs))],
    );
    if (!Array.isArray(reply)) throw new PaymentsError(unexpectedStoreReplyMessage('RedisIdempotencyStore', 'claim'));
    const [status, attempt] = reply as [unknown, unknown];
    if (status === 'done') return { status: 'done' };
    if (status === 'busy') return { status: 'busy' };
    if (status === 'claimed' && typeof attempt === 'number') return { status: 'claimed', token, attempt };
    throw new PaymentsError(unexpectedStoreReplyMessage('RedisIdempotencyStore', 'claim'));
  }

  async complete(key: string, token: string, retentionMs: number): Promise<void> {
    const keys = this.keysOf(key);
    await this.run(SCRIPTS.complete, [keys.done, keys.lease, keys.state], [token, toMs(retentionMs)]);
  }

  async release(key: string, token: string): Promise<void> {
    const keys = this.keysOf(key);
    await this.run(SCRIPTS.release, [keys.done, keys.lease, keys.state], [token]);
  }

  /** Extends the lease of `token` on `key` (one script, owner-checked); false when the lease is lost. */
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const keys = this.keysOf(key);
    const reply = await this.run(SCRIPTS.renew, [keys.done, keys.lease, keys.state], [token, toMs(leaseMs)]);
    return reply === 1;
  }

  /** The client belongs to the caller, who closes it; nothing to release here. */
  async close(): Promise<void> {}

  /** One round trip to Redis (PING), for health checks. Rejects when Redis does not answer. */
  async ping(): Promise<void> {
    if (typeof this.redis.ping === 'function') await this.redis.ping();
    else await this.redis.eval('return 1', 0);
  }

  /** All keys of one claim share the `{...}` hash tag: same Cluster slot, so one script can touch them. */
  private keysOf(key: string): { done: string; lease: string; state: string } {
    const base = `${this.keyPrefix}{${key}}`;
    return { done: `${base}:done`, lease: `${base}:lease`, state: `${base}:state` };
  }

  /** The reconciler's watch list of one module instance on the same Redis, under the same key prefix. */
  intentWatchStore(instance?: string): RedisIntentWatchStore {
    return new RedisIntentWatchStore(this.redis, { keyPrefix: this.keyPrefix, instance });
  }

  /** EVALSHA, and EVAL once when the server does not have the script cached (restart, SCRIPT FLUSH). */
  private async run(lua: LuaScript, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(lua.sha1, keys.length, ...keys, ...args);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) {
        return this.redis.eval(lua.source, keys.length, ...keys, ...args);
      }
      throw error;
    }
  }
}

/** Redis PX takes a whole positive number of milliseconds. */
function toMs(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new PaymentsInvalidArgumentError(
      'RedisIdempotencyStore',
      'leaseMs',
      STORE_ARGUMENT_MESSAGES.positiveDurationMs,
    );
  }
  return Math.max(1, Math.ceil(ms));
}
