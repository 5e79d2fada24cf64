import { randomUUID } from 'node:crypto';
import type { IdempotencyClaim, IdempotencyStore } from '../../../../lib/index.js';

/*
 * A third party's store, as docs/custom-store.md describes it: every write is a conditional put or
 * update on one item per key, the way DynamoDB (`ConditionExpression`), Firestore preconditions, Cosmos
 * DB ETags or any compare-and-set key-value store work. No lock, no transaction, no Lua: the condition
 * on the write is what keeps two deliveries from both taking a claim.
 *
 * `ConditionalTable` stands in for the table: a Map whose every operation is asynchronous (so
 * concurrent claims really interleave between their read and their write) and whose writes check a
 * condition against the stored item atomically, throwing `ConditionalCheckFailedError` otherwise.
 */

/** One item per (event, handler) key, as it would be stored in a DynamoDB table with `pk` as its key. */
export interface ClaimItem {
  pk: string;
  /** Token of the latest claim; null once released or done. */
  owner: string | null;
  /** End of the running claim's lease (ms since the epoch). */
  leaseUntil: number;
  attempt: number;
  done: boolean;
  /** The item counts as absent after this (DynamoDB's TTL attribute deletes it some time later). */
  expiresAt: number;
  /** Bumped by each write: `put` with `version = :seen` is the compare-and-set. */
  version: number;
}

/** What DynamoDB throws when a `ConditionExpression` does not hold. */
export class ConditionalCheckFailedError extends Error {
  override readonly name = 'ConditionalCheckFailedException';
}

/** The table: get, put and update, each write conditional. Every call yields to the event loop first. */
export class ConditionalTable {
  readonly items = new Map<string, ClaimItem>();

  async get(pk: string): Promise<ClaimItem | undefined> {
    await tick();
    const item = this.items.get(pk);
    return item === undefined ? undefined : { ...item };
  }

  /** PutItem with `ConditionExpression`: `condition(current)` must hold, else nothing is written. */
  async put(item: Omit<ClaimItem, 'version'>, condition: (current: ClaimItem | undefined) => boolean): Promise<void> {
    await tick();
    const current = this.items.get(item.pk);
    if (!condition(current)) throw new ConditionalCheckFailedError('The conditional request failed');
    this.items.set(item.pk, { ...item, version: (current?.version ?? 0) + 1 });
  }

  /** UpdateItem with `ConditionExpression` on an existing item. */
  async update(
    pk: string,
    changes: (current: ClaimItem) => Partial<Omit<ClaimItem, 'pk' | 'version'>>,
    condition: (current: ClaimItem) => boolean,
  ): Promise<void> {
    await tick();
    const current = this.items.get(pk);
    if (current === undefined || !condition(current)) {
      throw new ConditionalCheckFailedError('The conditional request failed');
    }
    this.items.set(pk, { ...current, ...changes(current), version: current.version + 1 });
  }

  async delete(pk: string): Promise<void> {
    await tick();
    this.items.delete(pk);
  }
}

/** Options of the example store. */
export interface ConditionalPutIdempotencyStoreOptions {
  /** How long the attempt count of a key that never completes is kept. Default 3 days. */
  attemptsTtlMs?: number;
  /** Clock in ms since the epoch. Default `Date.now` (a real table uses the writer's clock). */
  now?: () => number;
}

/** An `IdempotencyStore` on conditional writes: the shape a DynamoDB store takes. */
export class ConditionalPutIdempotencyStore implements IdempotencyStore {
  readonly #attemptsTtlMs: number;
  readonly #now: () => number;

  constructor(
    private readonly table: ConditionalTable,
    options: ConditionalPutIdempotencyStoreOptions = {},
  ) {
    this.#attemptsTtlMs = options.attemptsTtlMs ?? 3 * 24 * 3600 * 1000;
    this.#now = options.now ?? Date.now;
  }

  async claim(key: string, leaseMs: number): Promise<IdempotencyClaim> {
    // A lost race re-reads once: the winner's item then says done or busy.
    for (let tries = 0; tries < 2; tries += 1) {
      const now = this.#now();
      const seen = await this.table.get(key);
      const live = seen !== undefined && seen.expiresAt > now;
      if (live && seen.done) return { status: 'done' };
      if (live && seen.owner !== null && seen.leaseUntil > now) return { status: 'busy' };
      const token = randomUUID();
      const attempt = live ? seen.attempt + 1 : 1;
      try {
        await this.table.put(
          {
            pk: key,
            owner: token,
            leaseUntil: now + leaseMs,
            attempt,
            done: false,
            expiresAt: now + Math.max(this.#attemptsTtlMs, leaseMs),
          },
          // attribute_not_exists(pk) OR version = :seen
          (current) => (seen === undefined ? current === undefined : current?.version === seen.version),
        );
        return { status: 'claimed', token, attempt };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedError)) throw error;
      }
    }
    return { status: 'busy' };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<void> {
    const now = this.#now();
    await this.ifOwner(key, token, now, () => ({
      done: true,
      owner: null,
      leaseUntil: 0,
      expiresAt: now + retentionMs,
    }));
  }

  async release(key: string, token: string): Promise<void> {
    await this.ifOwner(key, token, this.#now(), () => ({ owner: null, leaseUntil: 0 }));
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const now = this.#now();
    return this.ifOwner(key, token, now, (item) => ({
      leaseUntil: now + leaseMs,
      expiresAt: Math.max(item.expiresAt, now + leaseMs),
    }));
  }

  /** UpdateItem ... ConditionExpression `owner = :token AND done = false AND expiresAt > :now`; false when it did not hold. */
  private async ifOwner(
    key: string,
    token: string,
    now: number,
    changes: (item: ClaimItem) => Partial<ClaimItem>,
  ): Promise<boolean> {
    try {
      await this.table.update(key, changes, (item) => item.owner === token && !item.done && item.expiresAt > now);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedError) return false;
      throw error;
    }
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
