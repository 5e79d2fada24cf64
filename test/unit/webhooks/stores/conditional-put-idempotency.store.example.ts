import { randomUUID } from 'node:crypto';
import type { IdempotencyClaim, IdempotencyStore } from '../../../../lib/index.js';
import type { RunClaimRequest, RunCompletion, RunRelease, RunRenewal } from '../../../../lib/webhooks/index.js';
import { runRecord, type RunRecordDocument } from '../../../../lib/webhooks/index.js';

/*
 * A third party's store, as docs/custom-store.md describes it: one item per record key, every write a
 * conditional put on the item's version, the way DynamoDB (`ConditionExpression`), Firestore
 * preconditions, Cosmos DB ETags or any compare-and-set key-value store work. No lock, no transaction,
 * no Lua: read the record, apply one of `runRecord`'s functions, write it back only if nobody wrote
 * since; on a lost race, read and apply again.
 *
 * `ConditionalTable` stands in for the table: a Map whose every operation is asynchronous (so
 * concurrent calls really interleave between their read and their write) and whose writes check a
 * condition against the stored item atomically, throwing `ConditionalCheckFailedError` otherwise.
 */

/** One item per record key, as it would be stored in a DynamoDB table with `pk` as its key. */
export interface RecordItem {
  pk: string;
  record: RunRecordDocument;
  /** Bumped by each write: `put` with `version = :seen` is the compare-and-set. */
  version: number;
}

/** What DynamoDB throws when a `ConditionExpression` does not hold. */
export class ConditionalCheckFailedError extends Error {
  override readonly name = 'ConditionalCheckFailedException';
}

/** The table: get and put, each put conditional. Every call yields to the event loop first. */
export class ConditionalTable {
  readonly items = new Map<string, RecordItem>();

  async get(pk: string): Promise<RecordItem | undefined> {
    await tick();
    const item = this.items.get(pk);
    return item === undefined ? undefined : structuredClone(item);
  }

  /** PutItem with `ConditionExpression`: `condition(current)` must hold, else nothing is written. */
  async put(
    pk: string,
    record: RunRecordDocument,
    condition: (current: RecordItem | undefined) => boolean,
  ): Promise<void> {
    await tick();
    const current = this.items.get(pk);
    if (!condition(current)) throw new ConditionalCheckFailedError('The conditional request failed');
    this.items.set(pk, { pk, record: structuredClone(record), version: (current?.version ?? 0) + 1 });
  }

  async delete(pk: string): Promise<void> {
    await tick();
    this.items.delete(pk);
  }
}

/** Options of the example store. */
export interface ConditionalPutIdempotencyStoreOptions {
  /** How long the attempt count of a run that never completes is kept. Default 3 days. */
  attemptsTtlMs?: number;
  /** Clock in ms since the epoch. Default `Date.now` (a real table uses the writer's clock). */
  now?: () => number;
}

/** Lost races in a row after which a claim answers busy (the winners hold the record). */
const MAX_TRIES = 8;

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

  async claim(key: string, request: RunClaimRequest): Promise<IdempotencyClaim> {
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const seen = await this.table.get(key);
      const { claim, document, changed } = runRecord.claim(
        seen?.record,
        request,
        this.#now(),
        randomUUID(),
        this.#attemptsTtlMs,
      );
      if (!changed) return claim;
      if (await this.#putIfUnchanged(key, document, seen)) return claim;
    }
    return { status: 'busy' };
  }

  async complete(key: string, completion: RunCompletion): Promise<void> {
    await this.#change(key, (record) => runRecord.complete(record, completion, this.#now()));
  }

  async release(key: string, release: RunRelease): Promise<void> {
    await this.#change(key, (record) => runRecord.release(record, release, this.#now(), this.#attemptsTtlMs));
  }

  async renew(key: string, renewal: RunRenewal): Promise<boolean> {
    return this.#change(key, (record) => runRecord.renew(record, renewal, this.#now()));
  }

  /** Read, change, write back if nobody wrote since; again on a lost race. False when `change` says no. */
  async #change(key: string, change: (record: RunRecordDocument | undefined) => RunRecordDocument | undefined) {
    for (;;) {
      const seen = await this.table.get(key);
      const next = change(seen?.record);
      if (next === undefined) return false;
      if (await this.#putIfUnchanged(key, next, seen)) return true;
    }
  }

  /** PutItem ... ConditionExpression `attribute_not_exists(pk) OR version = :seen`: false when another write came first. */
  async #putIfUnchanged(key: string, record: RunRecordDocument, seen: RecordItem | undefined): Promise<boolean> {
    try {
      await this.table.put(key, record, (current) =>
        seen === undefined ? current === undefined : current?.version === seen.version,
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedError) return false;
      throw error;
    }
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
