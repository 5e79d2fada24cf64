import type { Logger } from '@nestjs/common';
import type { PaymentIntent, SetupIntent } from '../../client/payments.types.js';
import type { PaymentsRuntime } from '../../core/payments.runtime.js';
import { WebhookLogSampler } from '../log/webhook-log.sampler.js';
import {
  PaymentsApiError,
  PaymentsAuthenticationError,
  PaymentsPermissionError,
  PaymentsRateLimitError,
} from '../../errors/payments.errors.js';
import type { DispatchOutcome, DispatchResult, PaymentEventsDispatch } from '../contracts/dispatch-result.types.js';
import { toPromise } from '../../core/payments.pending.js';
import type { IntentWatchStore, WatchedIntent } from '../contracts/intent-watch-store.interface.js';
import type { PaymentReconcileRecord } from '../contracts/payment-delivery-listener.interface.js';
import type { ResolvedPaymentsReconcileOptions } from '../contracts/payments-reconcile.options.js';
import { nextCheckDelayMs } from './payments-reconcile.validator.js';
import { formatAge, reconciledEvent, type ReconcileClient, type ReconcileSweepResult } from './reconcile-sweep.js';

const SETTLED: ReadonlySet<DispatchOutcome> = new Set(['handled', 'duplicate', 'unhandled']);

/** Failed retrieves in a row after which an intent past `maxAgeSeconds` is given up. */
const GIVE_UP_AFTER_FAILURES = 3;
/** Most intents remembered per process as settling or failing (beyond: forgotten, which only delays a give-up). */
const MAX_REMEMBERED = 10_000;

/** What one check asks of the sweep: go on (undefined), count an unanswered retrieve, or stop. */
export type RetrieveOutcome = ReconcileSweepResult['stopped'] | 'unanswered';

/**
 * One check of one watched intent: retrieve it, and act on what the service answers. A terminal state
 * dispatches its event through the handlers (`ctx.source === 'reconciliation'`) and, once settled, is
 * forgotten; another state is checked again on the cadence, or given up past `maxAgeSeconds`; a failed
 * retrieve backs that intent off alone (the sweep decides whether to go on).
 */
export class WatchedIntentRetrieve {
  /** 401/403 to retrieves: one line per window, not one per intent. */
  private readonly authLog: WebhookLogSampler;
  /**
   * Intents this process found in a terminal state with a handler still to run: never given up on a
   * failed retrieve (a failed handler is retried, never dropped).
   */
  private readonly settling = new Set<string>();
  /** Failed retrieves of an intent in a row, in this process: giving up on failures takes a few. */
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly store: IntentWatchStore,
    private readonly dispatcher: PaymentEventsDispatch,
    private readonly client: ReconcileClient,
    private readonly runtime: PaymentsRuntime,
    private readonly options: ResolvedPaymentsReconcileOptions,
    private readonly logger: Logger,
    /** Told what was done with each intent (the reconciler passes it to the plug-ins' `onReconcile`). */
    private readonly reported: (record: PaymentReconcileRecord) => void,
  ) {
    this.authLog = new WebhookLogSampler({ write: (line) => this.logger.error(line), now: () => this.runtime.now() });
  }

  /** Retrieves one intent and acts on its state; a reason to stop the sweep, or undefined. */
  async check(intent: WatchedIntent, result: ReconcileSweepResult): Promise<RetrieveOutcome> {
    result.checked++;
    let retrieved: PaymentIntent | SetupIntent;
    try {
      retrieved =
        intent.kind === 'payment_intent'
          ? await this.client.paymentIntents.retrieve(intent.id)
          : await this.client.setupIntents.retrieve(intent.id);
    } catch (error) {
      return this.retrieveFailed(intent, result, error);
    }
    this.failures.delete(intent.id);
    const now = this.runtime.now();
    const state = String((retrieved as { state?: unknown }).state);
    const options = this.options;
    if (options.terminalStates[intent.kind].has(state)) {
      const dispatching = toPromise(() =>
        this.dispatcher.dispatch(reconciledEvent(intent.kind, state, retrieved), {
          receivedAt: new Date(now),
          source: 'reconciliation',
        }),
      );
      // A sweep never waits without bound on a handler: past one sweep interval, the run goes on alone
      // (its claim renewed, so no other sweep or webhook runs it meanwhile) and the sweep moves on.
      const dispatched = await settledWithin(dispatching, options.everyMs);
      if (dispatched === undefined) {
        this.remember(this.settling, intent.id);
        await this.reschedule(intent, now);
        result.pending++;
        this.logger.warn(
          `Reconciliation: the handlers of ${intent.kind} ${intent.id} (${state}) still run after ${options.everyMs / 1000} s; the sweep goes on without them (their claim is kept while they run)`,
        );
        dispatching
          .then(
            (late) => (SETTLED.has(late.outcome) ? this.forget(intent) : undefined),
            () => undefined,
          )
          .then(undefined, () => undefined);
        return undefined;
      }
      if (!SETTLED.has(dispatched.outcome)) {
        // A handler failed or the store was down: retried on the next cadence step, like a redelivery.
        this.remember(this.settling, intent.id);
        await this.reschedule(intent, now);
        result.pending++;
        return undefined;
      }
      await this.forget(intent);
      const ran = dispatched.handlers.some((handler) => handler.status === 'done');
      if (ran) result.reconciled++;
      else result.settled++;
      this.report(intent, state, ran ? 'reconciled' : 'settled');
      if (ran) this.logger.log(`Reconciled ${intent.kind} ${intent.id}: ${state}, no webhook had come; handlers ran`);
      return undefined;
    }
    await this.backOff(intent, now, result, state);
    return undefined;
  }

  /**
   * A retrieve that failed: that intent alone backs off (rescheduled on its cadence, or given up past
   * `maxAgeSeconds`), and the sweep goes on with the others, except after a 429 (the service asks every
   * caller to slow down) or a few unanswered retrieves in a row.
   */
  private async retrieveFailed(
    intent: WatchedIntent,
    result: ReconcileSweepResult,
    error: unknown,
  ): Promise<RetrieveOutcome> {
    if (error instanceof PaymentsApiError && error.status === 404) {
      await this.forget(intent);
      result.gone++;
      this.report(intent, undefined, 'gone');
      this.logger.warn(
        `Reconciliation: ${intent.kind} ${intent.id} is unknown to the service (404); no longer watched`,
      );
      return undefined;
    }
    if (error instanceof PaymentsAuthenticationError || error instanceof PaymentsPermissionError) {
      this.authLog.log(
        'unauthorized',
        `Reconciliation: the service answered ${error.status} to a retrieve of ${intent.kind} ${intent.id} (check the API key's rights); that intent is checked again later`,
      );
    }
    const failures = (this.failures.get(intent.id) ?? 0) + 1;
    if (this.failures.size >= MAX_REMEMBERED) this.failures.clear();
    this.failures.set(intent.id, failures);
    await this.backOff(intent, this.runtime.now(), result, undefined, failures);
    if (error instanceof PaymentsRateLimitError) return 'rate_limited'; // after the client's own retries
    if (error instanceof PaymentsAuthenticationError || error instanceof PaymentsPermissionError) return 'unanswered';
    if (error instanceof PaymentsApiError) return undefined;
    return 'unanswered'; // no answer (network, timeout)
  }

  /**
   * Not settled yet: checked again on its cadence, or given up once older than `maxAgeSeconds`: after a
   * retrieve showing a state that is not terminal, or after `GIVE_UP_AFTER_FAILURES` failed retrieves in
   * a row (one that never answers is given up too), never while a handler of its terminal state is
   * still to run.
   */
  private async backOff(
    intent: WatchedIntent,
    now: number,
    result: ReconcileSweepResult,
    state: string | undefined,
    failures?: number,
  ): Promise<void> {
    const young = now - intent.createdAt < this.options.maxAgeMs;
    const failing = failures !== undefined && (failures < GIVE_UP_AFTER_FAILURES || this.settling.has(intent.id));
    if (young || failing) {
      await this.reschedule(intent, now);
      result.pending++;
      return;
    }
    await this.forget(intent);
    result.gaveUp++;
    this.report(intent, state, 'gave_up');
    this.logger.warn(
      `Reconciliation gave up on ${intent.kind} ${intent.id}: ${state === undefined ? 'its state could not be retrieved' : `still ${state}`} after ${formatAge(now - intent.createdAt)} (webhooks.reconcile.maxAgeSeconds); look at it by hand`,
    );
  }

  /** Adds `id` to a per-process set, bounded (beyond it the set starts again: that only delays a give-up). */
  private remember(set: Set<string>, id: string): void {
    if (set.size >= MAX_REMEMBERED) set.clear();
    set.add(id);
  }

  private async forget(intent: WatchedIntent): Promise<void> {
    await this.store.forget(intent.id);
    this.settling.delete(intent.id);
    this.failures.delete(intent.id);
  }

  private async reschedule(intent: WatchedIntent, now: number): Promise<void> {
    const delay = nextCheckDelayMs(now - intent.createdAt, this.options.cadence);
    await this.store.reschedule(intent.id, now + delay, intent.checks + 1);
  }

  private report(
    intent: WatchedIntent,
    state: string | undefined,
    outcome: 'reconciled' | 'settled' | 'gave_up' | 'gone',
  ): void {
    this.reported({
      kind: intent.kind,
      intentId: intent.id,
      ...(state === undefined ? {} : { state }),
      outcome,
      at: new Date(this.runtime.now()),
    });
  }
}

/** `running`'s result once it settles within `ms`, else undefined at `ms` (an unref()ed timer; a rejection rejects). */
function settledWithin(running: Promise<DispatchResult>, ms: number): Promise<DispatchResult | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    timer.unref?.();
  });
  return Promise.race([running, late]).finally(() => clearTimeout(timer));
}
