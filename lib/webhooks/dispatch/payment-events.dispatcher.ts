import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { PAYMENTS_CLIENT } from '../../client/payments-client.tokens.js';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { PAYMENT_EVENTS_REGISTRY, PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { createPaymentEventContext, type PaymentIntentsRetriever } from './payment-event.context.js';
import type { PaymentEvent, PaymentEventContext } from '../contracts/payment-event.types.js';
import { PaymentEventsRegistry, type PaymentEventHandlerRegistration } from './payment-events.registry.js';
import { IdempotencyStore, type IdempotencyClaim } from '../contracts/idempotency-store.interface.js';
import { reportRenewalProblem, whileRenewingLease } from './idempotency-lease.renewal.js';
import { isPromiseLike, settle, toPromise, type Pending } from '../../core/payments.pending.js';
import { WebhookLogSampler } from '../log/webhook-log.sampler.js';
import type { DispatchHandlerResult, DispatchMeta, DispatchResult } from '../contracts/dispatch-result.types.js';
import { PaymentsTelemetry } from '../../telemetry/payments.telemetry.js';
import { retryCompleteLater, retryReleaseLater } from './claim-release.retry.js';
import { aggregate, deliveryLine, describe, whereOf, type HandlerRun } from './dispatch-summary.js';
import {
  PAYMENTS_DISPATCH_PLUGINS,
  type HandlerCallOutcome,
  type PaymentsDispatchPlugin,
} from '../contracts/dispatch-plugin.interface.js';
import {
  HandlerCallUnavailableError,
  PaymentsApiError,
  PaymentsAuthenticationError,
  PaymentsConfigurationError,
  PaymentsPermissionError,
} from '../../errors/payments.errors.js';
import { DispatchHooks } from './dispatch-hooks.js';
import { webhooksLogger } from '../log/receiver.logger.js';
import { eventRecordOf, runSlot, type EventRecord } from '../records/record-keys.js';
import { reconciledEvent } from '../records/retrieved-state.event.js';
import { CurrentIntentRetrieval, type RetrievedIntent } from './current-intent.retrieval.js';

/**
 * One dispatch with current-state handling: the intent its runs act on. `retrieved` is known before
 * any run when the dispatch comes from a retrieve (reconciliation, a superseded delivery's current
 * state); `found` is the intent a run's retrieve showed in another state (the state to dispatch).
 */
interface CurrentStateDispatch {
  readonly record: EventRecord;
  readonly retrieved: RetrievedIntent | undefined;
  found: { state: string; intent: RetrievedIntent } | undefined;
}

/** A dispatch of a current state that settled it: nothing more to do for the superseded delivery. */
const SETTLED_OUTCOMES: ReadonlySet<string> = new Set(['handled', 'duplicate', 'unhandled', 'busy']);

export type {
  DispatchHandlerResult,
  DispatchHandlerStatus,
  DispatchMeta,
  DispatchOutcome,
  DispatchResult,
} from '../contracts/dispatch-result.types.js';

/**
 * Runs the handlers bound to a verified event, each at most once. The event's runs are kept in one
 * record of the `IdempotencyStore` (the intent's, for an intent's state event; the event's own
 * otherwise), one slot per handler; each step of a run is one atomic call on that record: claim, renew
 * while the handler runs, then complete (success) or release (failure). Handlers of one event run
 * concurrently and in isolation. Used inline by the controller and by the queue worker.
 *
 * Plug-ins (`PaymentsDispatchPlugin`: the transactional inbox, reconciliation, the delivery listener)
 * contribute hooks around a handler call, at a completion and after a dispatch; the dispatcher imports
 * none of them.
 */
@Injectable()
export class PaymentEventsDispatcher implements OnApplicationBootstrap {
  private readonly logger: Logger;
  /** 409 lines are sampled: a sender can repeat an in-flight delivery as often as it likes. */
  private readonly busyLog = new WebhookLogSampler({
    write: (l) => this.logger.warn(l),
    now: () => this.runtime.now(),
  });
  private readonly leaseMs: number;
  private readonly retentionMs: number;
  /** '' for the unnamed instance, '<name>:' for a named one: instances sharing a store never share a record. */
  private readonly keyPrefix: string;
  /** The plug-ins' hooks: around a handler call (the inbox), at a completion and after a dispatch. */
  private readonly hooks: DispatchHooks;
  /** `webhooks.logDeliveries`: one compact line per dispatch; otherwise a dispatch that goes well logs nothing. */
  private readonly logDeliveries: boolean;
  /** `webhooks.currentState`: a handler without its own `current` opts in. */
  private readonly currentByDefault: boolean;
  /** Current-state handling's single-flight retrieves (one GET per intent at a time). */
  private readonly retrieval: CurrentIntentRetrieval;
  /** Retrieve failures of current-state handling: one line per reason and window, then a count. */
  private readonly retrieveLog = new WebhookLogSampler({
    write: (l) => this.logger.error(l),
    now: () => this.runtime.now(),
  });

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
    this.retentionMs = webhooks.retentionSeconds * 1000;
    this.keyPrefix = webhooks.storeKeyPrefix;
    this.hooks = new DispatchHooks(plugins, this.logger);
    this.logDeliveries = webhooks.logDeliveries === true;
    this.currentByDefault = webhooks.currentState === true;
    this.retrieval = new CurrentIntentRetrieval(client, runtime, this.hooks);
    if (typeof store.renew !== 'function') {
      this.logger.warn(
        `The idempotency store ${store.constructor?.name ?? 'in use'} has no renew(): a handler that runs longer than webhooks.claimTtlSeconds (${webhooks.claimTtlSeconds} s) may run twice; implement renew(key, { slot, token, leaseMs }) (see IdempotencyStore), or raise claimTtlSeconds above your slowest handler`,
      );
    }
  }

  /** Current-state handling retrieves intents: it needs this instance's API client. */
  onApplicationBootstrap(): void {
    if (this.client !== undefined && this.client !== null) return;
    const opted = this.registry.handlers().find((handler) => this.optsIn(handler));
    if (opted === undefined) return;
    throw new PaymentsConfigurationError(
      this.currentByDefault ? 'webhooks.currentState' : `@OnPaymentEvent(..., { current: true }) on ${opted.id}`,
      'needs the API client to retrieve intents, and this receiver has none',
      'register PaymentsModule.forRoot({ apiKey, environment, baseUrl, ... }) for this instance, or drop current-state handling',
    );
  }

  /** Whether `handler` runs on the current state of its intent (its own `current`, else `webhooks.currentState`). */
  private optsIn(handler: PaymentEventHandlerRegistration): boolean {
    const current = handler.options?.current;
    return current === undefined ? this.currentByDefault : current;
  }

  /**
   * Runs every handler bound to `event` that has not run it yet, and sums up what happened. Answered
   * without a promise when nothing had to wait (the in-memory store, a handler that returns no promise,
   * no OpenTelemetry SDK); never throws or rejects for a handler's or a store's failure (those are
   * outcomes).
   */
  dispatch(event: PaymentEvent, meta: DispatchMeta): Pending<DispatchResult> {
    const handlers = this.registry.handlersFor(event.event);
    const record = eventRecordOf(event, this.keyPrefix);
    if (handlers.length === 0) {
      if (this.logDeliveries)
        this.logger.log(`Event ${event.id} (${event.event}) unhandled: no handler is bound to this type`);
      else this.logger.debug(`Event ${event.id} (${event.event}) has no handler: acknowledged`);
      if (this.hooks.listening)
        this.hooks.afterDispatch({
          event,
          meta,
          record,
          outcome: 'unhandled',
          results: [],
          finishedAt: this.runtime.now(),
        });
      return { outcome: 'unhandled', handlers: [] };
    }
    // A retrieve's run (reconciliation) stands for the webhook of its state, whatever its synthetic id.
    const eventId = meta.source === 'reconciliation' ? undefined : event.id;
    // Current-state handling: an intent's state event with an opted-in handler (a loop, no allocation).
    if (record.state !== undefined) {
      for (const handler of handlers) {
        if (this.optsIn(handler)) return this.dispatchCurrent(handlers, event, meta, record, eventId);
      }
    }
    // One handler (the usual case): its completion also ends the intent's watch when the state ends it.
    // With several, the watch ends after the dispatch (the reconciliation plug-in's afterDispatch).
    const unwatch = handlers.length === 1 && this.hooks.unwatches(record);
    if (handlers.length === 1) {
      const result = this.runHandler(handlers[0]!, event, meta, record, eventId, unwatch);
      return isPromiseLike(result)
        ? result.then((settled) => this.summarise(event, meta, record, [settled]))
        : this.summarise(event, meta, record, [result]);
    }
    return Promise.all(handlers.map((handler) => this.runHandler(handler, event, meta, record, eventId, unwatch))).then(
      (results) => this.summarise(event, meta, record, results),
    );
  }

  /**
   * A dispatch with current-state handling: the opted-in handlers claim exclusively (no run of another
   * state of the intent is live), then share one retrieve of the intent, and run only if the event's
   * state is still the intent's; the others run as always. A delivery answered `superseded` then
   * dispatches the intent's current state, as reconciliation would, before its answer.
   */
  private dispatchCurrent(
    handlers: readonly PaymentEventHandlerRegistration[],
    event: PaymentEvent,
    meta: DispatchMeta,
    record: EventRecord,
    eventId: string | undefined,
  ): Promise<DispatchResult> {
    const unwatch = handlers.length === 1 && this.hooks.unwatches(record);
    const view: CurrentStateDispatch = {
      record,
      // A sweep's dispatch carries the intent it retrieved: no second GET. A superseded delivery's does
      // not use its own: that GET was made under the claim it released, and the intent may have moved on
      // before this dispatch's claim (a retrieve is the truth only when made under the claim it runs in).
      retrieved:
        meta.source === 'reconciliation' && meta.supersedes === undefined
          ? ((event.data as Record<string, unknown>)[record.kind!] as RetrievedIntent | undefined)
          : undefined,
      found: undefined,
    };
    const runs = handlers.map((handler) =>
      this.runHandler(handler, event, meta, record, eventId, unwatch, this.optsIn(handler) ? view : undefined),
    );
    return Promise.all(runs).then((results) => {
      const summary = this.summarise(event, meta, record, results);
      const found = view.found;
      // A superseding dispatch superseded in turn is not chained: the newer state's webhook brings it.
      if (summary.outcome !== 'superseded' || found === undefined || meta.supersedes !== undefined) return summary;
      // As reconciliation: a terminal state only (a recurring one is left to its own webhook).
      if (!this.hooks.dispatchesRetrieved(record.kind!, found.state)) return summary;
      return this.dispatchSuperseding(event, record, found).then(() => summary);
    });
  }

  /**
   * The current state of a superseded delivery's intent, dispatched once as reconciliation dispatches a
   * state it retrieved (the same event, the same claims: a retrieve's run of that state). Its failure
   * is logged; the superseded delivery's answer stands (the current state's own webhook, its
   * redeliveries and reconciliation still bring it).
   */
  private dispatchSuperseding(
    event: PaymentEvent,
    record: EventRecord,
    found: { state: string; intent: RetrievedIntent },
  ): Promise<void> {
    const current = reconciledEvent(record.kind!, found.state, found.intent);
    const meta: DispatchMeta = {
      receivedAt: new Date(this.runtime.now()),
      source: 'reconciliation',
      supersedes: event.id,
    };
    return toPromise(() => this.dispatch(current, meta)).then(
      (result) => {
        if (SETTLED_OUTCOMES.has(result.outcome)) return;
        this.logger.warn(
          `Current state ${current.event} of ${record.kind} ${record.intentId} (dispatched for superseded event ${event.id}) ended ${result.outcome}; its webhook or reconciliation brings it again`,
        );
      },
      () => undefined,
    );
  }

  /** The dispatch's outcome from its handlers' results; logs, and tells the plug-ins' `afterDispatch`. */
  private summarise(
    event: PaymentEvent,
    meta: DispatchMeta,
    record: EventRecord,
    results: DispatchHandlerResult[],
  ): DispatchResult {
    const outcome = aggregate(results);
    if (this.logDeliveries) this.logger.log(deliveryLine(event, outcome, results));
    else if (outcome === 'duplicate') {
      this.logger.log(`Event ${event.id} (${event.event}) is a duplicate: every handler had already completed it`);
    } else if (outcome === 'superseded') {
      this.logger.log(
        `Event ${event.id} (${event.event}) superseded: ${record.kind} ${record.intentId} has left ${record.state}; its opted-in handlers did not run (a terminal current state is dispatched instead)`,
      );
    }
    if (this.hooks.listening)
      this.hooks.afterDispatch({ event, meta, record, outcome, results, finishedAt: this.runtime.now() });
    return { outcome, handlers: results };
  }

  /** One handler, in its own span (a child of the delivery or queue span) when an SDK records. */
  private runHandler(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    meta: DispatchMeta,
    record: EventRecord,
    eventId: string | undefined,
    unwatch: boolean,
    current?: CurrentStateDispatch,
  ): Pending<DispatchHandlerResult> {
    const run: HandlerRun = { handler, event, key: record.key, slot: runSlot(record, handler.id), eventId, unwatch };
    if (!this.telemetry.recording) return this.runOne(run, meta, current);
    return this.telemetry.runHandler(handler.id, event, () => toPromise(() => this.runOne(run, meta, current)));
  }

  /**
   * Claim, run, then complete or release one handler's run. Never rejects. With a store that answers at
   * once (the in-memory one) and a handler that returns no promise, all of it happens at once.
   */
  private runOne(run: HandlerRun, meta: DispatchMeta, current?: CurrentStateDispatch): Pending<DispatchHandlerResult> {
    if (current !== undefined) {
      // Exclusive: busy while a run of another state of the intent holds its lease (no overlap).
      return settle(
        () =>
          this.store.claim(run.key, { slot: run.slot, eventId: run.eventId, leaseMs: this.leaseMs, exclusive: true }),
        (claim) => this.runCurrent(run, claim, meta, current),
        (error) => this.claimFailed(run, error),
      );
    }
    return settle(
      () => this.store.claim(run.key, { slot: run.slot, eventId: run.eventId, leaseMs: this.leaseMs }),
      (claim) => this.runClaimed(run, claim, meta),
      (error) => this.claimFailed(run, error),
    );
  }

  /**
   * A claimed run of an opted-in handler: the intent retrieved (the GET in flight for it shared) while
   * the claim is held, so no run of another state starts between the retrieve and the run; the handler
   * runs only when the intent is still in the event's state, else the claim is released (`superseded`).
   */
  private runCurrent(
    run: HandlerRun,
    claim: IdempotencyClaim,
    meta: DispatchMeta,
    current: CurrentStateDispatch,
  ): Pending<DispatchHandlerResult> {
    if (claim.status !== 'claimed') return this.runClaimed(run, claim, meta);
    if (current.retrieved !== undefined) return this.runClaimed(run, claim, meta, current.retrieved);
    const { record } = current;
    return this.retrieval.retrieve(record).then(
      (intent) => {
        const state = String((intent as { state?: unknown }).state);
        if (state === record.state) return this.runClaimed(run, claim, meta, intent);
        current.found ??= { state, intent };
        return this.released(run, claim.token, { handler: run.handler.id, status: 'superseded' });
      },
      (error: unknown) => this.retrieveFailed(run, claim.token, record, error),
    );
  }

  /**
   * The retrieve failed: the handler never runs on a guess. 404: the intent is unknown to the service,
   * answered 200 `gone` and logged, as reconciliation gives such an intent up; anything else (network,
   * 5xx, 429 after the client's retries, 401/403) answers 503 and the delivery comes again.
   */
  private retrieveFailed(
    run: HandlerRun,
    token: string,
    record: EventRecord,
    error: unknown,
  ): Pending<DispatchHandlerResult> {
    const what = `${record.kind} ${record.intentId}`;
    if (error instanceof PaymentsApiError && error.status === 404) {
      this.logger.warn(
        `Current state: ${what} is unknown to the service (404); ${whereOf(run.event, run.handler)} not run, answered gone (and no longer watched for reconciliation)`,
      );
      return this.released(run, token, { handler: run.handler.id, status: 'gone', error });
    }
    if (error instanceof PaymentsAuthenticationError || error instanceof PaymentsPermissionError) {
      this.retrieveLog.log(
        'unauthorized',
        `Current state: the service answered ${error.status} to a retrieve of ${what} (check the API key's rights); ${whereOf(run.event, run.handler)} not run, answered 503 for redelivery`,
      );
    } else {
      this.retrieveLog.log(
        'unavailable',
        `Current state: the retrieve of ${what} failed (${describe(error)}); ${whereOf(run.event, run.handler)} not run, answered 503 for redelivery`,
      );
    }
    return this.released(run, token, { handler: run.handler.id, status: 'retrieve_failed', error });
  }

  private claimFailed(run: HandlerRun, error: unknown): DispatchHandlerResult {
    this.logger.error(
      `Idempotency store unavailable while claiming ${whereOf(run.event, run.handler)}: not run (${describe(error)})`,
    );
    this.telemetry.storeError('claim');
    return { handler: run.handler.id, status: 'store_unavailable', error };
  }

  /**
   * After the claim: skip (done), give way (busy), or run the handler and record how it went. `intent`:
   * the intent current-state handling retrieved for this run (`ctx.intent`).
   */
  private runClaimed(
    run: HandlerRun,
    claim: IdempotencyClaim,
    meta: DispatchMeta,
    intent?: RetrievedIntent,
  ): Pending<DispatchHandlerResult> {
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
    const ctx = createPaymentEventContext(
      event,
      this.client,
      attempt,
      meta.receivedAt,
      meta.source,
      claim.handled,
      intent,
    );
    const started = this.runtime.now();
    // A plug-in that calls this handler itself (the inbox: in a transaction with its record).
    const around = this.hooks.aroundOf(handler);
    if (around !== undefined) return this.aroundSettles(run, claim.token, attempt, started, around, ctx);
    let returned: unknown;
    try {
      returned = handler.invoke(event, ctx);
    } catch (error) {
      return this.handlerFailed(run, claim.token, attempt, started, error);
    }
    // Done at once: no lease to keep alive, and no timer on the receiver's synchronous path.
    if (!isPromiseLike(returned)) return this.handlerDone(run, claim.token, attempt, started, 'done');
    return this.renewing(run, claim.token, returned).then(
      () => this.handlerDone(run, claim.token, attempt, started, 'done'),
      (error: unknown) => this.handlerFailed(run, claim.token, attempt, started, error),
    );
  }

  /**
   * A handler called by a plug-in's `aroundHandler` (the inbox): the claim is renewed while it runs,
   * then completed (`ran`, `skipped`) or released (`busy`, a failure).
   */
  private aroundSettles(
    run: HandlerRun,
    token: string,
    attempt: number,
    started: number,
    plugin: PaymentsDispatchPlugin,
    context: PaymentEventContext,
  ): Promise<DispatchHandlerResult> {
    const { handler, event } = run;
    const call = {
      handler,
      event,
      context,
      key: run.key,
      slot: run.slot,
      eventId: run.eventId,
      invoke: (ctx?: PaymentEventContext) => handler.invoke(event, ctx ?? context),
    };
    return this.renewing(
      run,
      token,
      toPromise(() => plugin.aroundHandler!(call)),
    ).then(
      (outcome: HandlerCallOutcome) => {
        if (outcome === 'busy') {
          // Anyone can resend a delivery in flight: sampled, as the store's 409 lines are.
          this.busyLog.log('busy', `Busy ${whereOf(event, handler)}: the ${plugin.name} holds a concurrent run`);
          return this.released(run, token, { handler: handler.id, status: 'busy' });
        }
        return this.handlerDone(run, token, attempt, started, outcome === 'ran' ? 'done' : 'skipped', true);
      },
      (error: unknown) => {
        if (!(error instanceof HandlerCallUnavailableError))
          return this.handlerFailed(run, token, attempt, started, error, plugin.failureNote);
        this.logger.error(
          `${error.message} for ${whereOf(event, handler)}: nothing committed; released for redelivery`,
        );
        this.telemetry.storeError('complete');
        return this.released(run, token, {
          handler: handler.id,
          status: 'store_unavailable',
          attempt,
          error: error.reason,
        });
      },
    );
  }

  /** `running` (a handler's promise), while its run's lease is renewed every third of the lease. */
  private renewing<T>(run: HandlerRun, token: string, running: PromiseLike<T>): Promise<T> {
    return whileRenewingLease(running, {
      store: this.store,
      key: run.key,
      slot: run.slot,
      token,
      leaseMs: this.leaseMs,
      onProblem: (problem) =>
        reportRenewalProblem(problem, whereOf(run.event, run.handler), run.handler.id, this.logger, this.telemetry),
    });
  }

  /**
   * The handler returned (or the inbox found it done): record the run's completion. A store failure
   * answers 503, except after a plug-in committed the effect with its own record (`committed`: the
   * inbox row is the proof): then the completion is retried in the background and the answer stands.
   */
  private handlerDone(
    run: HandlerRun,
    token: string,
    attempt: number,
    started: number,
    status: 'done' | 'skipped',
    committed = false,
  ): Pending<DispatchHandlerResult> {
    const durationMs = this.runtime.now() - started;
    const result: DispatchHandlerResult =
      status === 'done'
        ? { handler: run.handler.id, status, durationMs, attempt }
        : { handler: run.handler.id, status };
    // No line per handled event (even at debug, which Nest's default logger prints): `logDeliveries`
    // opts in to one line per dispatch. docs/logging.md has the policy and its measured cost.
    const completion = {
      slot: run.slot,
      token,
      eventId: run.eventId,
      retentionMs: this.retentionMs,
      unwatch: run.unwatch,
    };
    return settle(
      () => this.store.complete(run.key, completion),
      () => result,
      (error) => {
        if (!committed) return this.completeFailed(run, durationMs, attempt, error);
        // Committed, and the plug-in's record says so. Until the store records it the run stays leased
        // and a redelivery gets 409 (it never reaches the record that would skip it): completed again later.
        this.logger.warn(
          `Handled ${whereOf(run.event, run.handler)} (committed), but the store could not record it: ${describe(error)}; retrying in the background`,
        );
        this.telemetry.storeError('complete');
        retryCompleteLater(this.store, run.key, completion);
        return result;
      },
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

  /** The handler threw: release its run so a redelivery runs it again. */
  private handlerFailed(
    run: HandlerRun,
    token: string,
    attempt: number,
    started: number,
    error: unknown,
    note?: string,
  ): Pending<DispatchHandlerResult> {
    const durationMs = this.runtime.now() - started;
    this.logger.error(
      `Failed ${whereOf(run.event, run.handler)} in ${durationMs} ms (attempt ${attempt}): ${describe(error)}; ${note === undefined ? '' : `${note}, `}claim released for redelivery`,
      error instanceof Error ? error.stack : undefined,
    );
    return this.released(run, token, { handler: run.handler.id, status: 'failed', durationMs, attempt, error });
  }

  /** Releases the run, then answers `result` (a release that fails is retried in the background). */
  private released(run: HandlerRun, token: string, result: DispatchHandlerResult): Pending<DispatchHandlerResult> {
    return settle(
      () => this.store.release(run.key, { slot: run.slot, token }),
      () => result,
      (releaseError) => {
        // Retried in the background for ~30 s, else the lease ends after claimTtlSeconds (409 until then).
        this.logger.error(
          `Could not release the claim of ${whereOf(run.event, run.handler)}: ${describe(releaseError)}; retrying in the background`,
        );
        this.telemetry.storeError('release');
        retryReleaseLater(this.store, run.key, { slot: run.slot, token });
        return result;
      },
    );
  }
}
