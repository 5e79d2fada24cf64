import { PaymentsInvalidArgumentError } from '../errors/payments.errors.js';
import type { IdempotencyStore } from '../webhooks/contracts/idempotency-store.interface.js';
import { STORE_CONTRACT_MESSAGES } from './store-contract.messages.js';

/** The test functions the suite registers its cases with. Jest's, Vitest's, Mocha's and `node:test`'s fit. */
export interface IdempotencyStoreContractFramework {
  describe(name: string, fn: () => void): unknown;
  it(name: string, fn: () => Promise<void>): unknown;
  beforeEach(fn: () => Promise<void>): unknown;
  afterEach(fn: () => Promise<void>): unknown;
}

/** Options of `describeIdempotencyStore`. */
export interface IdempotencyStoreContractOptions<S extends IdempotencyStore = IdempotencyStore> {
  /** Lease, in ms, of the cases that wait for a lease to lapse. Default 200. */
  shortLeaseMs?: number;
  /** Retention, in ms, of the case that waits for a completed key to be forgotten. Default 200. */
  shortRetentionMs?: number;
  /**
   * Lets `ms` milliseconds pass for the store. Default: waits that long in real time (plus 30 ms).
   * A store on an injected clock passes one that advances it, and the suite runs instantly.
   */
  elapse?: (ms: number) => void | Promise<void>;
  /** Concurrent claims of the race case. Default 100. */
  concurrentClaims?: number;
  /**
   * Whether the store must implement `renew` (lease renewal while a handler runs). Default true: a
   * store without it fails the renewal cases. Pass false only if you accept that a handler running
   * past `claimTtlSeconds` may run twice.
   */
  renewal?: boolean;
  /**
   * Deletes the record `key` behind the store's back (as an operator, an eviction or a
   * failover would). Enables the "lease lost" case; without it that case is not registered.
   */
  forget?: (store: S, key: string) => void | Promise<void>;
  /** Runs after each case with the store the factory made: close it, delete its keys. */
  teardown?: (store: S) => void | Promise<void>;
  /**
   * A token this store never hands out, in the shape of its own (a UUID for the PostgreSQL store).
   * Default `'00000000-0000-4000-8000-000000000000'`.
   */
  foreignToken?: string;
  /**
   * Whether to hold the store's watch list (`intentWatchStore`, kept in the records) to the contract
   * too. Default true; pass false for a store without one (the reconciler then keeps its list in memory).
   */
  watchList?: boolean;
  /** The test functions. Default: the globals `describe`, `it`, `beforeEach`, `afterEach`. */
  framework?: IdempotencyStoreContractFramework;
}

/** The test functions as globals, read when the suite is described (never when this module loads). */
export function globalFramework(): IdempotencyStoreContractFramework {
  const globals = globalThis as unknown as Partial<IdempotencyStoreContractFramework>;
  const { describe, it, beforeEach, afterEach } = globals;
  if (
    typeof describe !== 'function' ||
    typeof it !== 'function' ||
    typeof beforeEach !== 'function' ||
    typeof afterEach !== 'function'
  ) {
    throw new PaymentsInvalidArgumentError(
      'describeIdempotencyStore',
      'options.framework',
      STORE_CONTRACT_MESSAGES.noFramework,
    );
  }
  return {
    describe: describe.bind(globalThis),
    it: it.bind(globalThis),
    beforeEach: beforeEach.bind(globalThis),
    afterEach: afterEach.bind(globalThis),
  };
}
