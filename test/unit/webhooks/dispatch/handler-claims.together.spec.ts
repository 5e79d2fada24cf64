import { describe, expect, it } from '@jest/globals';
import { MemoryIdempotencyStore, type IdempotencyClaim, type IdempotencyStore } from '../../../../lib/index.js';
import { HandlerClaims } from '../../../../lib/webhooks/dispatch/handler-claims.js';
import type { HandlerRun } from '../../../../lib/webhooks/dispatch/dispatch-summary.js';

const LEASE_MS = 60_000;
const FIRST = 'payment_intent:pi_1:succeeded:H.run';
const SECOND = 'evt_1:H.run';

/**
 * A `MemoryIdempotencyStore` answering a macrotask later, as a remote store does, that logs when each
 * call is sent and answered; a claim of a key in `failing` rejects (the engine did not answer).
 * `concurrentClaims` as given.
 */
class RemoteStore implements IdempotencyStore {
  readonly log: string[] = [];
  readonly failing = new Set<string>();
  readonly concurrentClaims: boolean;

  constructor(
    readonly memory: MemoryIdempotencyStore,
    together: boolean,
  ) {
    this.concurrentClaims = together;
  }

  private later<T>(what: string, fn: () => T): Promise<T> {
    this.log.push(`sent ${what}`);
    return new Promise<T>((resolve, reject) =>
      setImmediate(() => {
        this.log.push(`answered ${what}`);
        try {
          resolve(fn());
        } catch (error) {
          reject(error as Error);
        }
      }),
    );
  }

  claim(key: string, leaseMs: number): Promise<IdempotencyClaim> {
    return this.later(`claim ${key}`, () => {
      if (this.failing.has(key)) throw new Error(`claim ${key}: engine down`);
      return this.memory.claim(key, leaseMs) as IdempotencyClaim;
    });
  }
  complete(key: string, token: string, retentionMs: number): Promise<void> {
    return this.later(`complete ${key}`, () => void this.memory.complete(key, token, retentionMs));
  }
  release(key: string, token: string): Promise<void> {
    return this.later(`release ${key}`, () => void this.memory.release(key, token));
  }
  renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.later(`renew ${key}`, () => this.memory.renew(key, token, leaseMs) as boolean);
  }
}

type KeyState = 'free' | 'busy' | 'done' | 'fails';
const STATES: KeyState[] = ['free', 'busy', 'done', 'fails'];

/**
 * Puts `key` in `state`: held by another delivery, done, or free (the first key never claimed before,
 * so attempt 1 next; the second one claimed once and let go, so attempt 2 next). `fails`: free, and its
 * claim rejects.
 */
function prepare(store: RemoteStore, key: string, state: KeyState): void {
  if (state === 'fails') store.failing.add(key);
  const free = state === 'free' || state === 'fails';
  if (free && key === FIRST) return;
  const m = store.memory;
  const claim = m.claim(key, LEASE_MS) as IdempotencyClaim;
  if (claim.status !== 'claimed') throw new Error('unreachable');
  if (state === 'done') m.complete(key, claim.token, 1e9);
  if (free) m.release(key, claim.token);
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** `HandlerClaims` on `store` (nothing logged; release failures to `releaseFailed`). */
const claimsOn = (store: IdempotencyStore, releaseFailed: (run: HandlerRun, key: string) => void = () => undefined) =>
  new HandlerClaims(store, { keyPrefix: '', leaseMs: LEASE_MS, retentionMs: 1e9 }, releaseFailed, () => undefined);

/** A terminal-state webhook's run: its occurrence first, its event id second (kept). */
const terminalRun = () =>
  ({ handler: {}, event: {}, key: FIRST, second: { key: SECOND, token: '', keep: true } }) as HandlerRun;

/** What `claim(run)` answered (the token left out), and each key's state afterwards, read from the memory store. */
async function claimOnce(together: boolean, first: KeyState, second: KeyState) {
  const store = new RemoteStore(new MemoryIdempotencyStore(), together);
  prepare(store, SECOND, second);
  prepare(store, FIRST, first);
  const releaseFailures: string[] = [];
  const claims = claimsOn(store, (_run, key) => releaseFailures.push(key));
  const run = terminalRun();
  let outcome: unknown;
  try {
    const claim = await claims.claim(run);
    outcome = claim.status === 'claimed' ? { status: claim.status, attempt: claim.attempt } : claim;
  } catch (error) {
    outcome = `rejected: ${(error as Error).message}`;
  }
  await flush();
  const after = [FIRST, SECOND].map((key) => {
    const probe = store.memory.claim(key, LEASE_MS) as IdempotencyClaim;
    if (probe.status !== 'claimed') return probe.status;
    store.memory.release(key, probe.token);
    return `free, next attempt ${probe.attempt}`;
  });
  return { outcome, after, log: store.log, releaseFailures };
}

describe('HandlerClaims: both claims of a run at once for a store with `concurrentClaims`', () => {
  const combinations = STATES.flatMap((first) => STATES.map((second) => [first, second] as const));

  it.each(combinations)('first key %s, second key %s: the outcome of one claim after the other', async (a, b) => {
    const inTurn = await claimOnce(false, a, b);
    const together = await claimOnce(true, a, b);
    expect(together.outcome).toEqual(inTurn.outcome);
    expect(together.releaseFailures).toEqual([]);
    expect(together.after[0]).toEqual(inTurn.after[0]);
    if ((a === 'busy' || a === 'done' || a === 'fails') && b === 'free') {
      // The one difference: the second key was claimed while the first was refused, then let go. Its
      // claim count holds that claim (as any claim let go), one more than when it was never asked for.
      expect(inTurn.after[1]).toBe('free, next attempt 2');
      expect(together.after[1]).toBe('free, next attempt 3');
    } else {
      expect(together.after[1]).toEqual(inTurn.after[1]);
    }
  });

  it.each(combinations)('first key %s, second key %s: both claims sent before either is answered', async (a, b) => {
    const together = await claimOnce(true, a, b);
    expect(together.log.slice(0, 2)).toEqual([`sent claim ${FIRST}`, `sent claim ${SECOND}`]);
    const inTurn = await claimOnce(false, a, b);
    expect(inTurn.log.slice(0, 2)).toEqual([`sent claim ${FIRST}`, `answered claim ${FIRST}`]);
    // One after the other, the second key is asked for only when the first was granted.
    expect(inTurn.log.includes(`sent claim ${SECOND}`)).toBe(a === 'free');
  });

  it('grants a run claimed under both keys, the higher claim count, and completes both keys at once', async () => {
    const store = new RemoteStore(new MemoryIdempotencyStore(), true);
    prepare(store, SECOND, 'free');
    const claims = claimsOn(store);
    const run = terminalRun();
    const claim = await claims.claim(run);
    expect(claim).toEqual({ status: 'claimed', token: expect.any(String), attempt: 2 });
    expect(run.second!.token).not.toBe('');
    store.log.length = 0;
    await claims.complete(run, (claim as { token: string }).token);
    expect(store.log.slice(0, 2)).toEqual([`sent complete ${FIRST}`, `sent complete ${SECOND}`]);
    expect(store.memory.claim(FIRST, LEASE_MS)).toEqual({ status: 'done' });
    expect(store.memory.claim(SECOND, LEASE_MS)).toEqual({ status: 'done' });
  });

  it('claims in turn when the first claim is answered at once, even with `concurrentClaims`', () => {
    const memory = new MemoryIdempotencyStore();
    const held = memory.claim(FIRST, LEASE_MS) as IdempotencyClaim;
    expect(held.status).toBe('claimed');
    const asked: string[] = [];
    const store: IdempotencyStore = {
      concurrentClaims: true,
      claim: (key, leaseMs) => (asked.push(key), memory.claim(key, leaseMs)),
      complete: (key, token, ms) => memory.complete(key, token, ms),
      release: (key, token) => memory.release(key, token),
      renew: (key, token, ms) => memory.renew(key, token, ms),
    };
    const claims = claimsOn(store);
    const run = terminalRun();
    expect(claims.claim(run)).toEqual({ status: 'busy' });
    expect(asked).toEqual([FIRST]);
  });
});
