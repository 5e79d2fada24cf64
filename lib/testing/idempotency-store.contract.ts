import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { PaymentsInvalidArgumentError } from '../errors/payments.errors.js';
import type {
  IdempotencyClaim,
  IdempotencyStore,
  RunClaimRequest,
  RunCompletion,
} from '../webhooks/contracts/idempotency-store.interface.js';
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
const SLOT = 'succeeded|Handler.method';

/**
 * Registers the `IdempotencyStore` contract as a test suite: the rules of a record's runs (done per
 * event and per retrieve's run, busy, exclusive claims, tokens and owner checks, lease expiry, release
 * and attempt counting, retention, versions and handled states, lease renewal) and, when the store has
 * one, its watch list kept in the records. The built-in stores run it; run it on your own store to know
 * the receiver can rely on it. `factory` is called before each case and must return a store with
 * nothing under the keys the suite uses (each case uses fresh random keys, so a shared database or
 * Redis is fine).
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
  /** This case's record (an intent's) and the event its first webhook runs. */
  let key = '';
  let event = '';
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
  type Request = Partial<RunClaimRequest> & { key?: string };
  const claim = async (request: Request = {}): Promise<IdempotencyClaim> => {
    const { key: k = key, ...rest } = request;
    const eventId = 'eventId' in request ? request.eventId : event;
    return current().claim(k, { slot: SLOT, leaseMs: LONG_LEASE_MS, ...rest, eventId });
  };
  const claimed = async (request: Request = {}): Promise<Claimed> => {
    const got = await claim(request);
    assert.equal(
      got.status,
      'claimed',
      `expected the claim of ${request.slot ?? SLOT} to be granted, got ${got.status}`,
    );
    return got as Claimed;
  };
  const expectClaim = async (expected: IdempotencyClaim['status'], attempt?: number, request?: Request) => {
    const got = await claim(request);
    assert.equal(got.status, expected);
    if (attempt !== undefined) assert.equal((got as Claimed).attempt, attempt);
  };
  const complete = (token: string, more: Partial<RunCompletion> & { key?: string } = {}) => {
    const { key: k = key, ...rest } = more;
    const eventId = 'eventId' in more ? more.eventId : event;
    return current().complete(k, { slot: SLOT, token, retentionMs: LONG_RETENTION_MS, ...rest, eventId });
  };
  const release = (token: string, slot = SLOT, k = key) => current().release(k, { slot, token });
  const renew = (token: string, leaseMs: number, slot = SLOT) => {
    const s = current();
    if (typeof s.renew !== 'function') {
      assert.fail(
        `${name} has no renew(key, { slot, token, leaseMs }): a handler running past its lease may run twice`,
      );
    }
    return s.renew(key, { slot, token, leaseMs });
  };

  describe(`IdempotencyStore contract: ${name}`, () => {
    beforeEach(async () => {
      store = await factory();
      key = `contract:i:${randomUUID()}`;
      event = randomUUID();
    });
    afterEach(async () => {
      const made = store;
      store = undefined;
      if (made !== undefined) await options.teardown?.(made);
    });

    it(`[W4] grants exactly one of ${concurrentClaims} concurrent claims on one slot (the others are busy)`, async () => {
      const claims = await Promise.all(Array.from({ length: concurrentClaims }, () => claim()));
      assert.equal(claims.filter((c) => c.status === 'claimed').length, 1);
      assert.equal(claims.filter((c) => c.status === 'busy').length, concurrentClaims - 1);
    });

    it('grants one claim per slot when the slots of one record are claimed at once', async () => {
      const slots = Array.from({ length: 5 }, (_, i) => `succeeded|Handler.m${i}`);
      const claims = await Promise.all([...slots, ...slots].map((slot) => claim({ slot })));
      assert.equal(claims.filter((c) => c.status === 'claimed').length, slots.length);
    });

    it('answers claimed with attempt 1 and a token on a new record, then busy while the lease is held', async () => {
      const first = await claimed();
      assert.equal(first.attempt, 1);
      assert.equal(typeof first.token, 'string');
      assert.ok(first.token.length > 0);
      assert.deepEqual(await claim(), { status: 'busy' });
      assert.deepEqual(await claim({ eventId: randomUUID() }), { status: 'busy' });
    });

    it('keeps slots and records apart: one run does not affect another', async () => {
      const { token } = await claimed();
      await complete(token);
      assert.equal((await claimed({ slot: 'succeeded|Other.handler' })).attempt, 1);
      assert.equal((await claimed({ slot: 'cancelled|Handler.method' })).attempt, 1);
      assert.equal((await claimed({ key: `contract:i:${randomUUID()}` })).attempt, 1);
    });

    it('[W4] answers done after the owner completes, for every later claim of that event', async () => {
      const { token } = await claimed();
      await complete(token);
      assert.deepEqual(await claim(), { status: 'done' });
      assert.deepEqual(await claim(), { status: 'done' });
    });

    it('runs a state that does not recur once per intent: another event of it is done too', async () => {
      const first = await claimed();
      await complete(first.token);
      await expectClaim('done', undefined, { eventId: randomUUID() });
    });

    it('runs a state that may recur (requires_*) for each of its events, each event once', async () => {
      const slot = 'requires_payment_method|Handler.method';
      const first = await claimed({ slot });
      await complete(first.token, { slot });
      const other = randomUUID();
      const second = await claimed({ slot, eventId: other });
      await complete(second.token, { slot, eventId: other });
      await expectClaim('done', undefined, { slot });
      await expectClaim('done', undefined, { slot, eventId: other });
    });

    it("answers done to a retrieve's run (no event id) once any run of the slot completed", async () => {
      const { token } = await claimed();
      await complete(token);
      await expectClaim('done', undefined, { eventId: undefined });
      const slot = 'requires_capture|Handler.method';
      const recurring = await claimed({ slot });
      await complete(recurring.token, { slot });
      await expectClaim('done', undefined, { slot, eventId: undefined });
    });

    it("counts a retrieve's run of a state that may recur as its next webhook: that event is done, a later one runs", async () => {
      const slot = 'requires_capture|Handler.method';
      const retrieved = await claimed({ slot, eventId: undefined });
      await complete(retrieved.token, { slot, eventId: undefined });
      await expectClaim('done', undefined, { slot, eventId: undefined });
      await expectClaim('done', undefined, { slot });
      await expectClaim('done', undefined, { slot });
      await expectClaim('claimed', undefined, { slot, eventId: randomUUID() });
    });

    it("counts a retrieve's run of a state that does not recur as every webhook of it", async () => {
      const retrieved = await claimed({ eventId: undefined });
      await complete(retrieved.token, { eventId: undefined });
      await expectClaim('done');
      await expectClaim('done', undefined, { eventId: randomUUID() });
    });

    it('answers busy to an exclusive claim while a run of another state of the record holds its lease, and only then', async () => {
      const other = await claimed({ slot: 'requires_capture|Other.handler' });
      await expectClaim('busy', undefined, { exclusive: true });
      await expectClaim('claimed', undefined, { slot: 'succeeded|Third.handler' });
      await release(other.token, 'requires_capture|Other.handler');
      await expectClaim('claimed', undefined, { exclusive: true });
    });

    it('lets an exclusive claim through beside a run of the same state, and once the other state lapsed', async () => {
      await claimed({ slot: 'succeeded|Other.handler' });
      await expectClaim('claimed', undefined, { exclusive: true });
      await claimed({ slot: 'requires_capture|Other.handler', leaseMs: shortLeaseMs, key: `${key}x` });
      await elapse(shortLeaseMs);
      await expectClaim('claimed', undefined, { exclusive: true, key: `${key}x` });
    });

    it("counts the record's completed runs (version) and lists the states handled, the latest time each", async () => {
      const first = await claimed();
      assert.equal(first.version ?? 0, 0);
      assert.deepEqual([...(first.handled ?? [])], []);
      await complete(first.token);
      const cancelled = await claimed({ slot: 'cancelled|Handler.method', eventId: randomUUID() });
      assert.equal(cancelled.version, 1);
      assert.deepEqual(
        (cancelled.handled ?? []).map((h) => h.state),
        ['succeeded'],
      );
      assert.equal(typeof cancelled.handled![0]!.at, 'number');
      assert.ok(cancelled.handled![0]!.at > 1_500_000_000_000, 'handled times are ms since the epoch');
      // `handler` is optional: a store that keeps only states may leave it out; if it tells, it is the slot's.
      const handler = cancelled.handled![0]!.handler;
      assert.ok(handler === undefined || handler === SLOT.slice(SLOT.indexOf('|') + 1), `handler ${handler}`);
    });

    it('lists each (state, handler) that completed a run, sorted by state then handler, when the store names handlers', async () => {
      const first = await claimed();
      await complete(first.token);
      const otherEvent = randomUUID();
      const other = await claimed({ slot: 'succeeded|Another.handler', eventId: otherEvent });
      await complete(other.token, { slot: 'succeeded|Another.handler', eventId: otherEvent });
      const next = await claimed({ slot: 'cancelled|Handler.method', eventId: randomUUID() });
      const handled = next.handled ?? [];
      if (handled.some((h) => h.handler === undefined)) {
        // States only: each once.
        assert.deepEqual(
          handled.map((h) => h.state),
          ['succeeded'],
        );
        return;
      }
      assert.deepEqual(
        handled.map((h) => [h.state, h.handler]),
        [
          ['succeeded', 'Another.handler'],
          ['succeeded', 'Handler.method'],
        ],
      );
    });

    it('hands out a new token with each claim', async () => {
      const first = await claimed();
      await release(first.token);
      const second = await claimed();
      assert.notEqual(second.token, first.token);
    });

    it('[W4] lets a redelivery claim again after the owner releases, with the next attempt number', async () => {
      const first = await claimed();
      await release(first.token);
      await expectClaim('claimed', 2);
    });

    it('counts attempts across releases: 1, 2, 3', async () => {
      const attempts: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const got = await claimed();
        attempts.push(got.attempt);
        await release(got.token);
      }
      assert.deepEqual(attempts, [1, 2, 3]);
    });

    it('ignores complete and release with a token that does not own the slot', async () => {
      const owner = await claimed();
      await complete(foreign);
      await expectClaim('busy');
      await release(foreign);
      await expectClaim('busy');
      await complete(owner.token);
      await expectClaim('done');
    });

    it('ignores complete from an owner that already released', async () => {
      const got = await claimed();
      await release(got.token);
      await complete(got.token);
      await expectClaim('claimed', 2);
    });

    it('lets the slot be claimed again once the lease expires (its owner crashed), counting the attempt', async () => {
      const first = await claimed({ leaseMs: shortLeaseMs });
      await elapse(shortLeaseMs);
      const second = await claimed();
      assert.equal(second.attempt, 2);
      assert.notEqual(second.token, first.token);
    });

    it('ignores a late complete or release from an owner whose lease expired and was claimed by another delivery', async () => {
      const stale = await claimed({ leaseMs: shortLeaseMs });
      await elapse(shortLeaseMs);
      const fresh = await claimed();
      await complete(stale.token);
      await release(stale.token);
      await expectClaim('busy');
      await release(fresh.token);
      await expectClaim('claimed', 3);
    });

    it('lets an owner whose lease lapsed complete it while nobody else claimed it', async () => {
      const owner = await claimed({ leaseMs: shortLeaseMs });
      await elapse(shortLeaseMs);
      await complete(owner.token);
      await expectClaim('done');
    });

    it('ignores complete with a wrong token after the lease lapsed', async () => {
      await claimed({ leaseMs: shortLeaseMs });
      await elapse(shortLeaseMs);
      await complete(foreign);
      await expectClaim('claimed', 2);
    });

    it('keeps a completed run done for the retention passed to complete', async () => {
      const { token } = await claimed();
      await complete(token);
      await elapse(shortRetentionMs);
      await expectClaim('done');
    });

    it('forgets a completed record once its retention expires: the next claim starts again at attempt 1', async () => {
      const { token } = await claimed({ leaseMs: shortRetentionMs });
      await complete(token, { retentionMs: shortRetentionMs });
      await elapse(Math.max(shortRetentionMs, shortLeaseMs));
      await expectClaim('claimed', 1);
    });

    it('accepts unwatch on a completion of a record nobody watches, and it changes no claim', async () => {
      const { token } = await claimed();
      await complete(token, { unwatch: true });
      await expectClaim('done');
    });

    if (options.renewal !== false) {
      describe('renew (lease renewal while a handler runs)', () => {
        it('extends the lease of its owner: a claim after the original lease is still busy', async () => {
          const owner = await claimed({ leaseMs: shortLeaseMs });
          assert.equal(await renew(owner.token, LONG_LEASE_MS), true);
          await elapse(shortLeaseMs);
          await expectClaim('busy');
          await complete(owner.token);
          await expectClaim('done');
        });

        it('renews again and again: each renewal starts a new lease', async () => {
          const owner = await claimed({ leaseMs: shortLeaseMs });
          for (let i = 0; i < 3; i += 1) {
            await elapse(shortLeaseMs / 2);
            assert.equal(await renew(owner.token, shortLeaseMs), true);
          }
          assert.equal(await renew(owner.token, LONG_LEASE_MS), true);
          await expectClaim('busy');
        });

        it('answers false to a token that does not own the slot, and leaves the lease alone', async () => {
          const owner = await claimed({ leaseMs: shortLeaseMs });
          assert.equal(await renew(foreign, LONG_LEASE_MS), false);
          await elapse(shortLeaseMs);
          const next = await claimed();
          assert.equal(next.attempt, 2);
          assert.notEqual(next.token, owner.token);
        });

        it('answers false on a slot nobody claimed', async () => {
          assert.equal(await renew(foreign, LONG_LEASE_MS), false);
          await expectClaim('claimed', 1);
        });

        it('answers false once the owner completed or released', async () => {
          const done = await claimed();
          await complete(done.token);
          assert.equal(await renew(done.token, LONG_LEASE_MS), false);
          await expectClaim('done');
          const other = 'cancelled|Handler.method';
          const released = await claimed({ slot: other });
          await release(released.token, other);
          assert.equal(await renew(released.token, LONG_LEASE_MS, other), false);
          assert.equal((await claimed({ slot: other })).attempt, 2);
        });

        it('answers false (lease lost) to an owner whose lease expired and was claimed by another delivery', async () => {
          const stale = await claimed({ leaseMs: shortLeaseMs });
          await elapse(shortLeaseMs);
          const fresh = await claimed();
          assert.equal(await renew(stale.token, LONG_LEASE_MS), false);
          assert.equal(await renew(fresh.token, LONG_LEASE_MS), true);
        });

        it('lets an owner whose lease lapsed renew it while nobody else claimed it', async () => {
          const owner = await claimed({ leaseMs: shortLeaseMs });
          await elapse(shortLeaseMs);
          assert.equal(await renew(owner.token, LONG_LEASE_MS), true);
          await expectClaim('busy');
        });

        it('keeps the attempt count: a release after renewals makes the next claim attempt 2', async () => {
          const owner = await claimed();
          assert.equal(await renew(owner.token, LONG_LEASE_MS), true);
          assert.equal(await renew(owner.token, LONG_LEASE_MS), true);
          await release(owner.token);
          await expectClaim('claimed', 2);
        });

        if (options.forget !== undefined) {
          const forget = options.forget;
          it('answers false (lease lost) when the record was deleted behind its back, and the slot can be claimed again', async () => {
            const owner = await claimed();
            await forget(current(), key);
            assert.equal(await renew(owner.token, LONG_LEASE_MS), false);
            await expectClaim('claimed');
          });
        }
      });
    }

    if (options.watchList === false) return;
    describe('the watch list kept in the records (intentWatchStore)', () => {
      const list = (instance?: string) => {
        const s = current();
        if (typeof s.intentWatchStore !== 'function') {
          assert.fail(`${name} has no intentWatchStore(instance): pass watchList: false to skip these cases`);
        }
        return s.intentWatchStore(instance);
      };
      const instance = () => `contract${key.slice(-12)}`;
      const watched = (id: string, now: number) => ({
        kind: 'payment_intent' as const,
        id,
        createdAt: now,
        nextCheckAt: now,
        checks: 0,
      });
      const recordKey = (id: string) => `${instance()}:i:${id}`;

      it('lists a watched intent as due, and no longer once a completion with unwatch ended its watch', async () => {
        const id = randomUUID();
        const watch = list(instance());
        await watch.watch(watched(id, 1_000));
        assert.deepEqual(
          (await watch.due(2_000, 10)).map((i) => i.id),
          [id],
        );
        const got = await current().claim(recordKey(id), { slot: SLOT, eventId: event, leaseMs: LONG_LEASE_MS });
        assert.equal(got.status, 'claimed');
        await current().complete(recordKey(id), {
          slot: SLOT,
          token: (got as Claimed).token,
          eventId: event,
          retentionMs: LONG_RETENTION_MS,
          unwatch: true,
        });
        assert.deepEqual(await watch.due(2_000, 10), []);
      });

      it('keeps a watch through claims and completions without unwatch, and through forget ends it', async () => {
        const id = randomUUID();
        const watch = list(instance());
        await watch.watch(watched(id, 1_000));
        const got = await current().claim(recordKey(id), { slot: SLOT, eventId: event, leaseMs: LONG_LEASE_MS });
        await current().complete(recordKey(id), {
          slot: SLOT,
          token: (got as Claimed).token,
          eventId: event,
          retentionMs: LONG_RETENTION_MS,
        });
        assert.deepEqual(
          (await watch.due(2_000, 10)).map((i) => i.id),
          [id],
        );
        await watch.reschedule(id, 5_000, 1);
        assert.deepEqual(await watch.due(2_000, 10), []);
        assert.deepEqual(
          (await watch.due(5_000, 10)).map((i) => [i.id, i.checks]),
          [[id, 1]],
        );
        await watch.forget(id);
        assert.deepEqual(await watch.due(5_000, 10), []);
      });

      it('keeps the lists of two instances apart, and one sweeper lease each', async () => {
        const id = randomUUID();
        const mine = list(instance());
        const theirs = list(`${instance()}b`);
        await mine.watch(watched(id, 1_000));
        assert.deepEqual(await theirs.due(2_000, 10), []);
        assert.equal(await mine.lease('a', LONG_LEASE_MS), true);
        assert.equal(await mine.lease('b', LONG_LEASE_MS), false);
        assert.equal(await theirs.lease('b', LONG_LEASE_MS), true);
      });
    });
  });
}

type Claimed = Extract<IdempotencyClaim, { status: 'claimed' }>;
