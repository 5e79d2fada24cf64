import { randomUUID } from 'node:crypto';
import { PaymentsError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import { STORE_ARGUMENT_MESSAGES, unexpectedStoreReplyMessage } from '../contracts/payments-webhooks.messages.js';
import { DEFAULT_RETENTION_SECONDS } from '../../core/payments.defaults.js';
import type {
  HandledState,
  IdempotencyClaim,
  IdempotencyStore,
  RunClaimRequest,
  RunCompletion,
  RunRelease,
  RunRenewal,
} from '../contracts/idempotency-store.interface.js';
import { handledOfSlots, stateOfSlot } from '../records/record-keys.js';
import { RedisIntentWatchStore } from './redis-intent-watch.store.js';
import { RECORD_SCRIPTS, type LuaScript } from './redis-record.scripts.js';
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
   * How long the attempt count of a run that never completes is kept, in seconds. Default
   * `DEFAULT_RETENTION_SECONDS` (3 days). A completed run is kept for its retention instead.
   */
  attemptsTtlSeconds?: number;
  /**
   * How long a watched intent's record is kept at least, in seconds (the reconciler gives up on an
   * intent after `webhooks.reconcile.maxAgeSeconds`, 7 days by default, and forgets it then). Default
   * 8 days. Raise it with `maxAgeSeconds`.
   */
  watchTtlSeconds?: number;
}

const DEFAULT_KEY_PREFIX = 'payments:idem:';
const NOTHING_HANDLED: readonly HandledState[] = Object.freeze([]);
const DONE: IdempotencyClaim = Object.freeze({ status: 'done' });
const BUSY: IdempotencyClaim = Object.freeze({ status: 'busy' });

/**
 * `IdempotencyStore` on Redis, for apps that run on several instances: every instance that points at
 * the same Redis (and uses the same `keyPrefix`) shares the records, so a handler runs once in total.
 *
 * One record per intent (and per event that names no intent) is one hash, `<keyPrefix>{<record key>}`:
 * every call of the store is one Lua script on that one key (so one Cluster slot by construction),
 * applying the rules of `IdempotencyStore` atomically. Concurrent claims on any number of instances get
 * exactly one `claimed`; `complete`, `release` and `renew` act only for the owner's token. Time is
 * Redis's (`TIME`), so instances with skewed clocks agree on every lease. Redis errors are never
 * swallowed: they reject, and the receiver answers 503 without running anything. The key expires once
 * its completed runs' retention ends, no run keeps it and it is not watched. The client is not closed
 * by the store: it belongs to the caller.
 *
 * @example
 * const redis = new Redis(process.env.REDIS_URL);
 * PaymentsModule.forRoot({ ..., webhooks: { verifier, store: new RedisIdempotencyStore(redis) } })
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly keyPrefix: string;
  private readonly attemptsTtlMs: number;
  private readonly watchTtlMs: number;

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
    this.attemptsTtlMs = wholeSeconds(options.attemptsTtlSeconds, DEFAULT_RETENTION_SECONDS, 'attemptsTtlSeconds');
    this.watchTtlMs = wholeSeconds(options.watchTtlSeconds, 8 * 86_400, 'watchTtlSeconds');
  }

  async claim(key: string, request: RunClaimRequest): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const lease = toMs(request.leaseMs);
    const reply = await this.run(RECORD_SCRIPTS.claim, this.recordKey(key), [
      request.slot,
      request.eventId ?? '',
      token,
      lease,
      Math.max(lease, this.attemptsTtlMs),
      request.exclusive === true ? '1' : '0',
      stateOfSlot(request.slot) ?? '',
    ]);
    if (!Array.isArray(reply)) throw new PaymentsError(unexpectedStoreReplyMessage('RedisIdempotencyStore', 'claim'));
    const [status, attempt, version] = reply as [unknown, unknown, unknown];
    if (status === 'done') return DONE;
    if (status === 'busy') return BUSY;
    if (status !== 'claimed' || typeof attempt !== 'number' || typeof version !== 'number') {
      throw new PaymentsError(unexpectedStoreReplyMessage('RedisIdempotencyStore', 'claim'));
    }
    return { status: 'claimed', token, attempt, version, handled: handledOf(reply as unknown[]) };
  }

  async complete(key: string, completion: RunCompletion): Promise<void> {
    await this.run(RECORD_SCRIPTS.complete, this.recordKey(key), [
      completion.slot,
      completion.token,
      completion.eventId ?? '',
      toMs(completion.retentionMs),
      completion.unwatch === true ? '1' : '0',
    ]);
  }

  async release(key: string, release: RunRelease): Promise<void> {
    await this.run(RECORD_SCRIPTS.release, this.recordKey(key), [release.slot, release.token, this.attemptsTtlMs]);
  }

  /** Extends the owner's lease (one script); false when the token no longer owns the slot. */
  async renew(key: string, renewal: RunRenewal): Promise<boolean> {
    const reply = await this.run(RECORD_SCRIPTS.renew, this.recordKey(key), [
      renewal.slot,
      renewal.token,
      toMs(renewal.leaseMs),
    ]);
    return reply === 1;
  }

  /** The client belongs to the caller, who closes it; nothing to release here. */
  async close(): Promise<void> {}

  /** One round trip to Redis (PING), for health checks. Rejects when Redis does not answer. */
  async ping(): Promise<void> {
    if (typeof this.redis.ping === 'function') await this.redis.ping();
    else await this.redis.eval('return 1', 0);
  }

  /**
   * The reconciler's watch list of one module instance, kept in the records (`w`) with a due index per
   * instance (`<keyPrefix>{watch}` or `{watch:<instance>}`: two sorted sets and the sweeper lease).
   */
  intentWatchStore(instance?: string): RedisIntentWatchStore {
    return new RedisIntentWatchStore(this.redis, {
      keyPrefix: this.keyPrefix,
      instance,
      watchTtlMs: this.watchTtlMs,
      run: (lua, key, args) => this.run(lua, key, args),
    });
  }

  /** The record's key: its hash tag is the whole record key, so one record is one Cluster slot. */
  private recordKey(key: string): string {
    return `${this.keyPrefix}{${key}}`;
  }

  /** EVALSHA on one key, and EVAL once when the server does not have the script cached (restart, SCRIPT FLUSH). */
  private async run(lua: LuaScript, key: string, args: (string | number)[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(lua.sha1, 1, key, ...args);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) {
        return this.redis.eval(lua.source, 1, key, ...args);
      }
      throw error;
    }
  }
}

/** The states handled, from a claim's reply: `slot, at` pairs after the first three elements. */
function handledOf(reply: readonly unknown[]): readonly HandledState[] {
  if (reply.length <= 3) return NOTHING_HANDLED;
  const latest = new Map<string, number>();
  for (let i = 3; i + 1 < reply.length; i += 2) latest.set(String(reply[i]), Number(reply[i + 1]));
  return handledOfSlots(latest);
}

function wholeSeconds(value: number | undefined, fallback: number, option: string): number {
  const seconds = value ?? fallback;
  if (!Number.isInteger(seconds) || seconds < 1) {
    throw new PaymentsInvalidArgumentError(
      'RedisIdempotencyStore',
      option,
      STORE_ARGUMENT_MESSAGES.wholeSecondsAtLeastOne,
    );
  }
  return seconds * 1000;
}

/** Redis takes a whole positive number of milliseconds. */
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
