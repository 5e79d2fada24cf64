import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { PaymentsInvalidArgumentError } from '../errors/payments.errors.js';
import type { IdempotencyClaim, IdempotencyStore } from '../webhooks/contracts/idempotency-store.interface.js';
import { globalFramework, type IdempotencyStoreContractOptions } from './idempotency-store.contract.options.js';

/*
 * No import of a test framework here: `nestjs-payments/testing` is also loaded by apps and scripts
 * that run no tests. The suite takes `describe`, `it`, `beforeEach` and `afterEach` from the options
 * or, at call time, from the globals (Jest, Vitest with `globals: true`, Mocha), and asserts with
 * `node:assert`, so it needs no `expect` and adds no dependency.
 */

export type {
  IdempotencyStoreContractFramework,
  IdempotencyStoreContractOptions,
} from './idempotency-store.contract.options.js';
import { STORE_CONTRACT_MESSAGES } from './store-contract.messages.js';

const LONG_LEASE_MS = 60_000;
const LONG_RETENTION_MS = 60_000;

/**
 * Registers the `IdempotencyStore` contract as a test suite: claim races, tokens and owner checks,
 * lease expiry, release and attempt counting, done retention and lease renewal. The built-in stores
 * run it; run it on your own store to know the receiver can rely on it. `factory` is called before
 * each case and must return a store with nothing claimed under the keys the suite uses (each case
 * uses fresh random keys, so a shared database or Redis is fine).
 *
 * @example
 * import { describeIdempotencyStore } from 'nestjs-payments/testing';
 * describeIdempotencyStore('MyDynamoStore', () => new MyDynamoStore(client, { table }), {
 *   teardown: (store) => store.close(),
 * });
 */
export function describeIdempotencyStore<S extends IdempotencyStore>(
  name: string,
  factory: () => S | Promise<S>,
  options: IdempotencyStoreContractOptions<S> = {},
): void {
  const { describe, it, beforeEach, afterEach } = options.framework ?? globalFramework();
  const shortLeaseMs = options.shortLeaseMs ?? 200;
  const shortRetentionMs = options.shortRetentionMs ?? 200;
  const concurrentClaims = options.concurrentClaims ?? 100;
  const foreign = options.foreignToken ?? '00000000-0000-4000-8000-000000000000';
  const elapse = async (ms: number): Promise<void> => {
    if (options.elapse) await options.elapse(ms);
    else await new Promise<void>((resolve) => setTimeout(resolve, ms + 30));
  };

  let store: S | undefined;
  let key = '';
  const current = (): S => {
    if (store === undefined) {
      throw new PaymentsInvalidArgumentError(
        `describeIdempotencyStore(${name})`,
        'factory',
        STORE_CONTRACT_MESSAGES.noStore,
      );
    }
    return store;
  };
  const claimed = async (k: string = key, leaseMs: number = LONG_LEASE_MS): Promise<Claimed> => {
    const claim = await current().claim(k, leaseMs);
    assert.equal(claim.status, 'claimed', `expected claim(${k}) to be granted, got ${claim.status}`);
    return claim as Claimed;
  };
  const expectClaim = async (expected: IdempotencyClaim['status'], attempt?: number): Promise<void> => {
    const claim = await current().claim(key, LONG_LEASE_MS);
    assert.equal(claim.status, expected);
    if (attempt !== undefined) assert.equal((claim as Claimed).attempt, attempt);
  };
  const renewOf = (s: S): NonNullable<IdempotencyStore['renew']> => {
    if (typeof s.renew !== 'function') {
      assert.fail(`${name} has no renew(key, token, leaseMs): a handler running past its lease may run twice`);
    }
    return s.renew.bind(s);
  };

  describe(`IdempotencyStore contract: ${name}`, () => {
    beforeEach(async () => {
      store = await factory();
      key = `contract-${randomUUID()}:Handler.method`;
    });
    afterEach(async () => {
      const made = store;
      store = undefined;
      if (made !== undefined) await options.teardown?.(made);
    });

    it(`[W4] grants exactly one of ${concurrentClaims} concurrent claims on one key (the others are busy)`, async () => {
      const claims = await Promise.all(
        Array.from({ length: concurrentClaims }, () => current().claim(key, LONG_LEASE_MS)),
      );
      assert.equal(claims.filter((c) => c.status === 'claimed').length, 1);
      assert.equal(claims.filter((c) => c.status === 'busy').length, concurrentClaims - 1);
    });

    it('answers claimed with attempt 1 and a token on a new key, then busy while the lease is held', async () => {
      const first = await claimed();
      assert.equal(first.attempt, 1);
      assert.equal(typeof first.token, 'string');
      assert.ok(first.token.length > 0);
      assert.deepEqual(await current().claim(key, LONG_LEASE_MS), { status: 'busy' });
    });

    it('keeps keys apart: one (event, handler) pair does not affect another', async () => {
      const { token } = await claimed();
      await current().complete(key, token, LONG_RETENTION_MS);
      assert.equal((await claimed(`${key}:other-handler`)).attempt, 1);
      assert.equal((await claimed(`other-${key}`)).attempt, 1);
    });

    it('[W4] answers done after the owner completes, for every later claim', async () => {
      const { token } = await claimed();
      await current().complete(key, token, LONG_RETENTION_MS);
      assert.deepEqual(await current().claim(key, LONG_LEASE_MS), { status: 'done' });
      assert.deepEqual(await current().claim(key, LONG_LEASE_MS), { status: 'done' });
    });

    it('hands out a new token with each claim', async () => {
      const first = await claimed();
      await current().release(key, first.token);
      const second = await claimed();
      assert.notEqual(second.token, first.token);
    });

    it('[W4] lets a redelivery claim again after the owner releases, with the next attempt number', async () => {
      const first = await claimed();
      await current().release(key, first.token);
      await expectClaim('claimed', 2);
    });

    it('counts attempts across releases: 1, 2, 3', async () => {
      const attempts: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const claim = await claimed();
        attempts.push(claim.attempt);
        await current().release(key, claim.token);
      }
      assert.deepEqual(attempts, [1, 2, 3]);
    });

    it('ignores complete and release with a token that does not own the lease', async () => {
      const owner = await claimed();
      await current().complete(key, foreign, LONG_RETENTION_MS);
      await expectClaim('busy');
      await current().release(key, foreign);
      await expectClaim('busy');
      await current().complete(key, owner.token, LONG_RETENTION_MS);
      await expectClaim('done');
    });

    it('ignores complete from an owner that already released', async () => {
      const claim = await claimed();
      await current().release(key, claim.token);
      await current().complete(key, claim.token, LONG_RETENTION_MS);
      await expectClaim('claimed', 2);
    });

    it('lets the key be claimed again once the lease expires (its owner crashed), counting the attempt', async () => {
      const first = await claimed(key, shortLeaseMs);
      await elapse(shortLeaseMs);
      const second = await claimed();
      assert.equal(second.attempt, 2);
      assert.notEqual(second.token, first.token);
    });

    it('ignores a late complete or release from an owner whose lease expired and was claimed by another delivery', async () => {
      const stale = await claimed(key, shortLeaseMs);
      await elapse(shortLeaseMs);
      const fresh = await claimed();
      await current().complete(key, stale.token, LONG_RETENTION_MS);
      await current().release(key, stale.token);
      await expectClaim('busy');
      await current().release(key, fresh.token);
      await expectClaim('claimed', 3);
    });

    it('lets an owner whose lease lapsed complete it while nobody else claimed it', async () => {
      const owner = await claimed(key, shortLeaseMs);
      await elapse(shortLeaseMs);
      await current().complete(key, owner.token, LONG_RETENTION_MS);
      await expectClaim('done');
    });

    it('ignores complete with a wrong token after the lease lapsed', async () => {
      await claimed(key, shortLeaseMs);
      await elapse(shortLeaseMs);
      await current().complete(key, foreign, LONG_RETENTION_MS);
      await expectClaim('claimed', 2);
    });

    it('keeps a completed key done for the retention passed to complete', async () => {
      const { token } = await claimed();
      await current().complete(key, token, LONG_RETENTION_MS);
      await elapse(shortRetentionMs);
      await expectClaim('done');
    });

    it('forgets a completed key once its retention expires: the next claim starts again at attempt 1', async () => {
      const { token } = await claimed();
      await current().complete(key, token, shortRetentionMs);
      await elapse(shortRetentionMs);
      await expectClaim('claimed', 1);
    });

    if (options.renewal === false) return;

    describe('renew (lease renewal while a handler runs)', () => {
      it('extends the lease of its owner: a claim after the original lease is still busy', async () => {
        const owner = await claimed(key, shortLeaseMs);
        assert.equal(await renewOf(current())(key, owner.token, LONG_LEASE_MS), true);
        await elapse(shortLeaseMs);
        await expectClaim('busy');
        await current().complete(key, owner.token, LONG_RETENTION_MS);
        await expectClaim('done');
      });

      it('renews again and again: each renewal starts a new lease', async () => {
        const owner = await claimed(key, shortLeaseMs);
        for (let i = 0; i < 3; i += 1) {
          await elapse(shortLeaseMs / 2);
          assert.equal(await renewOf(current())(key, owner.token, shortLeaseMs), true);
        }
        assert.equal(await renewOf(current())(key, owner.token, LONG_LEASE_MS), true);
        await expectClaim('busy');
      });

      it('answers false to a token that does not own the claim, and leaves the lease alone', async () => {
        const owner = await claimed(key, shortLeaseMs);
        assert.equal(await renewOf(current())(key, foreign, LONG_LEASE_MS), false);
        await elapse(shortLeaseMs);
        const next = await claimed();
        assert.equal(next.attempt, 2);
        assert.notEqual(next.token, owner.token);
      });

      it('answers false on a key nobody claimed', async () => {
        assert.equal(await renewOf(current())(key, foreign, LONG_LEASE_MS), false);
        await expectClaim('claimed', 1);
      });

      it('answers false once the owner completed or released', async () => {
        const done = await claimed();
        await current().complete(key, done.token, LONG_RETENTION_MS);
        assert.equal(await renewOf(current())(key, done.token, LONG_LEASE_MS), false);
        await expectClaim('done');
        const other = `${key}:released`;
        const released = await claimed(other);
        await current().release(other, released.token);
        assert.equal(await renewOf(current())(other, released.token, LONG_LEASE_MS), false);
        assert.equal((await claimed(other)).attempt, 2);
      });

      it('answers false (lease lost) to an owner whose lease expired and was claimed by another delivery', async () => {
        const stale = await claimed(key, shortLeaseMs);
        await elapse(shortLeaseMs);
        const fresh = await claimed();
        assert.equal(await renewOf(current())(key, stale.token, LONG_LEASE_MS), false);
        assert.equal(await renewOf(current())(key, fresh.token, LONG_LEASE_MS), true);
      });

      it('lets an owner whose lease lapsed renew it while nobody else claimed it', async () => {
        const owner = await claimed(key, shortLeaseMs);
        await elapse(shortLeaseMs);
        assert.equal(await renewOf(current())(key, owner.token, LONG_LEASE_MS), true);
        await expectClaim('busy');
      });

      it('keeps the attempt count: a release after renewals makes the next claim attempt 2', async () => {
        const owner = await claimed();
        assert.equal(await renewOf(current())(key, owner.token, LONG_LEASE_MS), true);
        assert.equal(await renewOf(current())(key, owner.token, LONG_LEASE_MS), true);
        await current().release(key, owner.token);
        await expectClaim('claimed', 2);
      });

      if (options.forget === undefined) return;
      const forget = options.forget;
      it('answers false (lease lost) when the claim was deleted behind its back, and the key can be claimed again', async () => {
        const owner = await claimed();
        await forget(current(), key);
        assert.equal(await renewOf(current())(key, owner.token, LONG_LEASE_MS), false);
        await expectClaim('claimed');
      });
    });
  });
}

type Claimed = Extract<IdempotencyClaim, { status: 'claimed' }>;
