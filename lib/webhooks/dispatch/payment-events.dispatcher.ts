import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { PAYMENTS_CLIENT } from '../../client/payments-client.tokens.js';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { PAYMENT_EVENTS_REGISTRY, PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { createPaymentEventContext, type PaymentIntentsRetriever } from '../handlers/payment-event.context.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import { PaymentEventsRegistry, type PaymentEventHandlerRegistration } from '../handlers/payment-events.registry.js';
import { IdempotencyStore, type IdempotencyClaim } from '../contracts/idempotency-store.interface.js';
import { reportRenewalProblem } from './idempotency-lease.renewal.js';
import { isPromiseLike, settle, toPromise, type Pending } from '../../core/payments.pending.js';
import { WebhookLogSampler } from '../support/webhook-log.sampler.js';
import type { DispatchHandlerResult, DispatchMeta, DispatchResult } from '../contracts/dispatch-result.types.js';
import { PaymentsTelemetry } from '../../telemetry/payments.telemetry.js';
import { retryReleaseLater } from '../support/claim-release.retry.js';
import { aggregate, deliveryLine, describe, whereOf, type HandlerRun } from './dispatch-summary.js';
import { withOccurrence } from './terminal-occurrence.js';
import { HandlerClaims } from './handler-claims.js';
import { PAYMENTS_DISPATCH_PLUGINS, type PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import { DispatchHooks } from './dispatch-hooks.js';
import { DEFAULT_TERMINAL_STATES } from '../contracts/payments-reconcile.options.js';
import { webhooksLogger } from '../support/payments-webhooks.logger.js';

export type {
  DispatchHandlerResult,
  DispatchHandlerStatus,
  DispatchMeta,
  DispatchOutcome,
  DispatchResult,
} from '../contracts/dispatch-result.types.js';

/**
 * Runs the handlers bound to a verified event, each at most once: for each handler it claims the run's
 * keys in the `IdempotencyStore` (`HandlerClaims`: the event id, and an intent state's occurrence),
 * runs the handler only if it got them, and completes (success) or releases (failure) them. Handlers
 * of one event run concurrently and in isolation. Used inline by the controller and by the queue worker.
 *
 * Plug-ins (`PaymentsDispatchPlugin`: the transactional inbox, reconciliation, the delivery listener)
 * contribute hooks around a handler run and after a dispatch; the dispatcher imports none of them.
 */
@Injectable()
export class PaymentEventsDispatcher {
  private readonly logger: Logger;
  /** 409 lines are sampled: a sender can repeat an in-flight delivery as often as it likes. */
  private readonly busyLog = new WebhookLogSampler({
    write: (l) => this.logger.warn(l),
    now: () => this.runtime.now(),
  });
  private readonly leaseMs: number;
  /** The plug-ins' hooks: around a handler run (the inbox), after a dispatch (reconciliation, the listener). */
  private readonly hooks: DispatchHooks;
  /** `webhooks.logDeliveries`: one compact line per dispatch; otherwise a dispatch that goes well logs nothing. */
  private readonly logDeliveries: boolean;
  /** Terminal states (`webhooks.reconcile.terminalStates` or the defaults): their occurrence stays claimed. */
  private readonly terminalStates: typeof DEFAULT_TERMINAL_STATES;
  /** Which keys a handler run is claimed under, and the store calls on them together. */
  private readonly claims: HandlerClaims;

  constructor(
    @Inject(PAYMENT_EVENTS_REGISTRY) private readonly registry: PaymentEventsRegistry,
    @Inject(IdempotencyStore) private readonly store: IdempotencyStore,
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions,
    @Inject(PAYMENTS_RUNTIME) private readonly runtime: PaymentsRuntime,
    @Inject(PAYMENTS_CLIENT) private readonly client: PaymentIntentsRetriever,
    @Optional() @Inject(PaymentsTelemetry) private readonly telemetry: PaymentsTelemetry = PaymentsTelemetry.disabled(),
    @Optional() @Inject(PAYMENTS_DISPATCH_PLUGINS) plugins: readonly PaymentsDispatchPlugin[] = [],
  ) {
    this.logger = webhooksLogger(webhooks);
    this.leaseMs = webhooks.claimTtlSeconds * 1000;
    this.hooks = new DispatchHooks(plugins, this.logger);
    this.logDeliveries = webhooks.logDeliveries === true;
    this.terminalStates = webhooks.reconcile?.terminalStates ?? DEFAULT_TERMINAL_STATES;
    this.claims = new HandlerClaims(
      store,
      // '' for the unnamed instance, '<name>:' for a named one: instances sharing a store never share a claim.
      { keyPrefix: webhooks.storeKeyPrefix, leaseMs: this.leaseMs, retentionMs: webhooks.retentionSeconds * 1000 },
      (run, key, token, error) => this.releaseFailed({ ...run, key }, token, error),
      (line) => this.logger.warn(line),
    );
  }

  /**
   * Runs every handler bound to `event` that has not completed it yet, and sums up what happened.
   * Answered without a promise when nothing had to wait (the in-memory store, a handler that returns
   * no promise, no OpenTelemetry SDK); never throws or rejects for a handler's or a store's failure
   * (those are outcomes).
   */
  dispatch(event: PaymentEvent, meta: DispatchMeta): Pending<DispatchResult> {
    const handlers = this.registry.handlersFor(event.event);
    // An intent's state event: its handlers are also claimed per (intent, state), whatever the options.
    meta = withOccurrence(event, meta, this.terminalStates);
    if (handlers.length === 0) {
      if (this.logDeliveries)
        this.logger.log(`Event ${event.id} (${event.event}) unhandled: no handler is bound to this type`);
      else this.logger.debug(`Event ${event.id} (${event.event}) has no handler: acknowledged`);
      if (this.hooks.listening)
        this.hooks.afterDispatch({ event, meta, outcome: 'unhandled', results: [], finishedAt: this.runtime.now() });
      return { outcome: 'unhandled', handlers: [] };
    }
    // One handler (the usual case) runs alone: no Promise.all and its per-element closures.
    if (handlers.length === 1) {
      const result = this.runHandler(handlers[0]!, event, meta);
      return isPromiseLike(result)
        ? result.then((settled) => this.summarise(event, meta, [settled]))
        : this.summarise(event, meta, [result]);
    }
    return Promise.all(handlers.map((handler) => this.runHandler(handler, event, meta))).then((results) =>
      this.summarise(event, meta, results),
    );
  }

  /** The dispatch's outcome from its handlers' results; logs, and tells the plug-ins' `afterDispatch`. */
  private summarise(event: PaymentEvent, meta: DispatchMeta, results: DispatchHandlerResult[]): DispatchResult {
    const outcome = aggregate(results);
    if (this.logDeliveries) this.logger.log(deliveryLine(event, outcome, results));
    else if (outcome === 'duplicate') {
      this.logger.log(`Event ${event.id} (${event.event}) is a duplicate: every handler had already completed it`);
    }
    if (this.hooks.listening)
      this.hooks.afterDispatch({ event, meta, outcome, results, finishedAt: this.runtime.now() });
    return { outcome, handlers: results };
  }

  /** One handler, in its own span (a child of the delivery or queue span) when an SDK records. */
  private runHandler(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    meta: DispatchMeta,
  ): Pending<DispatchHandlerResult> {
    if (!this.telemetry.recording) return this.runOne(handler, event, meta);
    return this.telemetry.runHandler(handler.id, event, () => toPromise(() => this.runOne(handler, event, meta)));
  }

  /**
   * Claim, run, then complete or release one handler. Never rejects. With a store that answers at once
   * (the in-memory one) and a handler that returns no promise, all of it happens at once.
   */
  private runOne(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    meta: DispatchMeta,
  ): Pending<DispatchHandlerResult> {
    const run = this.claims.run(handler, event, meta);
    return settle(
      () => this.claims.claim(run),
      (claim) => this.runClaimed(run, claim, meta),
      (error) => this.claimFailed(handler, event, error),
    );
  }

  private claimFailed(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    error: unknown,
  ): DispatchHandlerResult {
    this.logger.error(
      `Idempotency store unavailable while claiming ${whereOf(event, handler)}: not run (${describe(error)})`,
    );
    this.telemetry.storeError('claim');
    return { handler: handler.id, status: 'store_unavailable', error };
  }

  /** After the claim: skip (done), give way (busy), or run the handler and record how it went. */
  private runClaimed(run: HandlerRun, claim: IdempotencyClaim, meta: DispatchMeta): Pending<DispatchHandlerResult> {
    const { handler, event } = run;
    if (claim.status === 'done') {
      // Not logged: the dispatch's outcome ('duplicate') says it once for all its handlers.
      return { handler: handler.id, status: 'skipped' };
    }
    if (claim.status === 'busy') {
      this.busyLog.log('busy', `Busy ${whereOf(event, handler)}: a concurrent delivery is running it`);
      return { handler: handler.id, status: 'busy' };
    }

    const attempt = Math.max(claim.attempt, meta.deliveryAttempt ?? 1);
    const ctx = createPaymentEventContext(event, this.client, attempt, meta.receivedAt, meta.source);
    // A plug-in that runs this handler itself (the inbox: in a transaction with its completion record).
    const runner = this.hooks.runnerOf(handler);
    if (runner !== undefined) {
      const running = runner.runHandler!(handler, event, ctx, { key: run.key, token: claim.token });
      const ran = this.renewing(run, claim.token, running);
      return run.second === undefined ? ran : ran.then((result) => this.afterRunner(run, result));
    }
    const started = this.runtime.now();
    let returned: unknown;
    try {
      returned = handler.invoke(event, ctx);
    } catch (error) {
      return this.handlerFailed(run, claim.token, attempt, started, error);
    }
    // Done at once: no lease to keep alive, and no timer on the receiver's synchronous path.
    if (!isPromiseLike(returned)) return this.handlerDone(run, claim.token, attempt, started);
    return this.handlerSettles(run, claim.token, attempt, started, returned);
  }

  /**
   * A handler that returned a promise: its claim is renewed while it runs, then its outcome recorded.
   * Apart from `runClaimed`, so that the synchronous path allocates none of these closures.
   */
  private handlerSettles(
    run: HandlerRun,
    token: string,
    attempt: number,
    started: number,
    running: PromiseLike<unknown>,
  ): Promise<DispatchHandlerResult> {
    return this.renewing(run, token, running).then(
      () => this.handlerDone(run, token, attempt, started),
      (error: unknown) => this.handlerFailed(run, token, attempt, started, error),
    );
  }

  /** `running` (a handler's promise), while its claims are renewed every third of the lease. */
  private renewing<T>(run: HandlerRun, token: string, running: PromiseLike<T>): Promise<T> {
    return this.claims.keepAlive(run, token, running, (problem) =>
      reportRenewalProblem(problem, whereOf(run.event, run.handler), run.handler.id, this.logger, this.telemetry),
    );
  }

  /** A plug-in settled the first key: the second follows (kept or let go after a run, let go otherwise). */
  private afterRunner(run: HandlerRun, result: DispatchHandlerResult): Pending<DispatchHandlerResult> {
    return settle(
      () => this.claims.settleSecond(run, result.status === 'done' || result.status === 'skipped'),
      () => result,
      (error) => this.completeFailed(run, result.durationMs ?? 0, result.attempt ?? 1, error),
    );
  }

  /** The handler returned: record its completion (a store failure answers 503). */
  private handlerDone(
    run: HandlerRun,
    token: string,
    attempt: number,
    started: number,
  ): Pending<DispatchHandlerResult> {
    const durationMs = this.runtime.now() - started;
    const done: DispatchHandlerResult = { handler: run.handler.id, status: 'done', durationMs, attempt };
    // No line per handled event (even at debug, which Nest's default logger prints): `logDeliveries`
    // opts in to one line per dispatch. docs/logging.md has the policy and its measured cost.
    return settle(
      () => this.claims.complete(run, token),
      () => done,
      (error) => this.completeFailed(run, durationMs, attempt, error),
    );
  }

  private completeFailed(run: HandlerRun, durationMs: number, attempt: number, error: unknown): DispatchHandlerResult {
    // The handler ran but its completion is not recorded: answer 503 so the service retries. The
    // lease keeps concurrent deliveries out until it expires; after that the handler may run again.
    this.logger.error(
      `Handled ${whereOf(run.event, run.handler)} in ${durationMs} ms, but the store could not record it: ${describe(error)}`,
    );
    this.telemetry.storeError('complete');
    return { handler: run.handler.id, status: 'store_unavailable', durationMs, attempt, error };
  }

  /** The handler threw: release its claim so a redelivery runs it again. */
  private handlerFailed(
    run: HandlerRun,
    token: string,
    attempt: number,
    started: number,
    error: unknown,
  ): Pending<DispatchHandlerResult> {
    const durationMs = this.runtime.now() - started;
    this.logger.error(
      `Failed ${whereOf(run.event, run.handler)} in ${durationMs} ms (attempt ${attempt}): ${describe(error)}; claim released for redelivery`,
      error instanceof Error ? error.stack : undefined,
    );
    const failed: DispatchHandlerResult = { handler: run.handler.id, status: 'failed', durationMs, attempt, error };
    this.claims.releaseSecond(run);
    return settle(
      () => this.store.release(run.key, token),
      () => failed,
      (releaseError) => {
        this.releaseFailed(run, token, releaseError);
        return failed;
      },
    );
  }

  private releaseFailed(run: HandlerRun, token: string, error: unknown): void {
    // Retried in the background for ~30 s, else the lease ends after claimTtlSeconds (409 until then).
    this.logger.error(
      `Could not release the claim of ${whereOf(run.event, run.handler)}: ${describe(error)}; retrying in the background`,
    );
    this.telemetry.storeError('release');
    retryReleaseLater(this.store, run.key, token);
  }
}
