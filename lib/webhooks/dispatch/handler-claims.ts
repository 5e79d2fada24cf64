import { isPromiseLike, PendingRejection, settle, type Pending } from '../../core/payments.pending.js';
import type { DispatchMeta } from '../contracts/dispatch-result.types.js';
import type { IdempotencyClaim, IdempotencyStore } from '../contracts/idempotency-store.interface.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import type { PaymentEventHandlerRegistration } from '../contracts/payment-event-handler.types.js';
import type { HandlerRun } from './dispatch-summary.js';
import { whileRenewingLease, type LeaseRenewalProblem } from './idempotency-lease.renewal.js';

const DONE: IdempotencyClaim = Object.freeze({ status: 'done' });

/**
 * The idempotency keys of one handler run, and the store calls on them: which keys an event is claimed
 * under, and claiming, completing and releasing them together.
 *
 * - An event that names no intent: its event id alone.
 * - A webhook of an intent's state: its event id **and** its occurrence (`kind:intentId:state`), whatever
 *   the options (reconciliation on or off, any `terminalStates`), so that a run recorded under either,
 *   by a release keyed otherwise or by the reconciler, is a duplicate. A terminal state's occurrence is
 *   claimed first and kept done (it is the reconciler's key, and the inbox's record); a state that may
 *   recur keeps its event id done, lets its occurrence go, and leaves a `seen` key done.
 * - A reconciled state: its occurrence, and its `seen` key (a webhook ran it while a release did not count
 *   it as terminal).
 */
export class HandlerClaims {
  /** The store takes both claims of a run at once (`IdempotencyStore.concurrentClaims`). */
  private readonly together: boolean;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly options: { keyPrefix: string; leaseMs: number; retentionMs: number },
    /** Told when a claim could not be let go (retried in the background by the caller). */
    private readonly releaseFailed: (run: HandlerRun, key: string, token: string, error: unknown) => void,
    warn: (line: string) => void,
  ) {
    this.together = store.concurrentClaims === true;
    if (typeof store.renew !== 'function') {
      warn(
        `The idempotency store ${store.constructor?.name ?? 'in use'} has no renew(): a handler that runs longer than webhooks.claimTtlSeconds (${options.leaseMs / 1000} s) may run twice; implement renew(key, token, leaseMs) (see IdempotencyStore), or raise claimTtlSeconds above your slowest handler`,
      );
    }
  }

  /** The keys of `handler`'s run of `event`. */
  run(handler: PaymentEventHandlerRegistration, event: PaymentEvent, meta: DispatchMeta): HandlerRun {
    const prefix = this.options.keyPrefix;
    // Joined, not written as templates: V8 keeps a concatenation as a tree of its parts (a cons string,
    // 3 objects here), and a store that keeps the key (the memory store, one or two per delivery, for
    // days) kept the tree; `join` makes one flat string. Retained per delivery: 493 -> 286 bytes.
    const eventKey = [prefix, event.id, ':', handler.id].join('');
    const occurrence = meta.occurrence;
    if (occurrence === undefined) return { handler, event, key: eventKey };
    const occurrenceKey = [prefix, occurrence.key, ':', handler.id].join('');
    // A terminal state's webhook (the usual delivery) needs no `seen` key: built only where it is used.
    if (occurrence.terminal && meta.source !== 'reconciliation') {
      return { handler, event, key: occurrenceKey, second: { key: eventKey, token: '', keep: true } };
    }
    const seenKey = [prefix, occurrence.key, ':seen:', handler.id].join('');
    if (meta.source === 'reconciliation') {
      return { handler, event, key: occurrenceKey, second: { key: seenKey, token: '', keep: false } };
    }
    return { handler, event, key: eventKey, second: { key: occurrenceKey, token: '', keep: false }, seen: seenKey };
  }

  /**
   * Claims the run's keys: `claimed` (the first key's token; the second's is kept on the run) only when
   * every key was free; `busy` when one is held (the other let go); `done` when one was done (the first
   * then recorded done too). Rejects when the store does. A store with `concurrentClaims` gets both
   * claims at once when the first one is not answered at once; the outcome is the same as one after the
   * other (whatever the second claim got is let go when the first was refused).
   */
  claim(run: HandlerRun): Pending<IdempotencyClaim> {
    // Written without settle(): a store that answers at once (memory) allocates no closure here.
    const first = this.claimNow(run.key);
    if (run.second === undefined || first instanceof PendingRejection) return first;
    if (!isPromiseLike(first)) return this.claimSecond(run, first);
    if (this.together) return this.claimedTogether(run, first, this.claimNow(run.second.key));
    return first.then((claim) => this.claimSecond(run, claim));
  }

  /** `store.claim`, a synchronous throw as a `PendingRejection`. */
  private claimNow(key: string): Pending<IdempotencyClaim> {
    try {
      return this.store.claim(key, this.options.leaseMs);
    } catch (error) {
      return new PendingRejection<IdempotencyClaim>(error);
    }
  }

  /**
   * Both claims sent at once: decided as `claimSecond` decides once the first is known, except that the
   * second claim was made whatever the first got: let go when the first was refused or failed.
   */
  private async claimedTogether(
    run: HandlerRun,
    first: PromiseLike<IdempotencyClaim>,
    second: Pending<IdempotencyClaim>,
  ): Promise<IdempotencyClaim> {
    const [a, b] = await Promise.allSettled([first, second]);
    if (a.status === 'rejected' || a.value.status !== 'claimed') {
      if (b.status === 'fulfilled' && b.value.status === 'claimed')
        this.releaseQuietly(run, run.second!.key, b.value.token);
      if (a.status === 'rejected') throw a.reason;
      return a.value;
    }
    if (b.status === 'rejected') return this.secondFailed(run, a.value, b.reason);
    return this.bothClaimed(run, a.value, b.value);
  }

  /** After the first key's claim: the second one, when the first was claimed. */
  private claimSecond(run: HandlerRun, first: IdempotencyClaim): Pending<IdempotencyClaim> {
    if (first.status !== 'claimed') return first;
    const claim = this.claimNow(run.second!.key);
    if (claim instanceof PendingRejection) return this.secondFailed(run, first, claim.error);
    return isPromiseLike(claim)
      ? claim.then(
          (second) => this.bothClaimed(run, first, second),
          (error: unknown) => this.secondFailed(run, first, error),
        )
      : this.bothClaimed(run, first, claim);
  }

  private bothClaimed(
    run: HandlerRun,
    first: IdempotencyClaim & { status: 'claimed' },
    claim: IdempotencyClaim,
  ): Pending<IdempotencyClaim> {
    if (claim.status === 'claimed') {
      run.second!.token = claim.token;
      return claim.attempt > first.attempt ? { ...first, attempt: claim.attempt } : first;
    }
    if (claim.status === 'busy') {
      this.releaseQuietly(run, run.key, first.token);
      return claim;
    }
    // Done under the other key: recorded under this one too (the reconciler reads the occurrence).
    return settle(
      () => this.store.complete(run.key, first.token, this.options.retentionMs),
      () => DONE,
      (error) => new PendingRejection<IdempotencyClaim>(error),
    );
  }

  private secondFailed(
    run: HandlerRun,
    first: IdempotencyClaim & { status: 'claimed' },
    error: unknown,
  ): PendingRejection<IdempotencyClaim> {
    this.releaseQuietly(run, run.key, first.token);
    return new PendingRejection<IdempotencyClaim>(error);
  }

  /**
   * After a successful run: every key recorded (a value when the store answered at once). Never throws:
   * a store's synchronous failure comes back as a `PendingRejection`.
   */
  complete(run: HandlerRun, token: string): Pending<unknown> {
    let first: Pending<unknown>;
    let second: Pending<unknown>;
    try {
      first = this.store.complete(run.key, token, this.options.retentionMs);
      if (run.second === undefined) return first;
      second = this.finishSecond(run);
    } catch (error) {
      return new PendingRejection(error);
    }
    if (first instanceof PendingRejection) return first;
    if (second instanceof PendingRejection) return second;
    return isPromiseLike(first) || isPromiseLike(second) ? Promise.all([first, second]) : undefined;
  }

  /**
   * The second key after the first one was settled by someone else (the transactional inbox): kept or
   * let go after a run (`ran`), let go otherwise.
   */
  settleSecond(run: HandlerRun, ran: boolean): Pending<unknown> {
    if (run.second === undefined) return undefined;
    if (ran) return this.finishSecond(run);
    this.releaseQuietly(run, run.second.key, run.second.token);
    return undefined;
  }

  /** After a failed run: the second key let go (the first is the caller's, whose failure it reports). */
  releaseSecond(run: HandlerRun): void {
    if (run.second !== undefined) this.releaseQuietly(run, run.second.key, run.second.token);
  }

  /** `running` (a handler's promise), while every key of the run is renewed every third of its lease. */
  keepAlive<T>(
    run: HandlerRun,
    token: string,
    running: PromiseLike<T>,
    onProblem: (problem: LeaseRenewalProblem) => void,
  ): Promise<T> {
    const leaseMs = this.options.leaseMs;
    const renewed = whileRenewingLease(running, { store: this.store, key: run.key, token, leaseMs, onProblem });
    const second = run.second;
    if (second === undefined) return renewed;
    return whileRenewingLease(renewed, { store: this.store, key: second.key, token: second.token, leaseMs, onProblem });
  }

  private finishSecond(run: HandlerRun): Pending<unknown> {
    const second = run.second!;
    const { leaseMs, retentionMs } = this.options;
    if (second.keep) return this.store.complete(second.key, second.token, retentionMs);
    this.releaseQuietly(run, second.key, second.token);
    const seen = run.seen;
    if (seen === undefined) return undefined;
    return settle(
      () => this.store.claim(seen, leaseMs),
      (claim) => (claim.status === 'claimed' ? this.store.complete(seen, claim.token, retentionMs) : undefined),
      (error) => new PendingRejection(error),
    );
  }

  private releaseQuietly(run: HandlerRun, key: string, token: string): void {
    settle(
      () => this.store.release(key, token),
      () => undefined,
      (error) => this.releaseFailed(run, key, token, error),
    );
  }
}
