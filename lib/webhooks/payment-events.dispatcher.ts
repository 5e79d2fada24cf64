import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { PAYMENTS_CLIENT } from '../client/payments-client.tokens.js';
import { DEFAULT_RETENTION_SECONDS } from '../core/payments.defaults.js';
import { PAYMENTS_RUNTIME } from '../core/payments.runtime.js';
import { PAYMENTS_EVENTS_REGISTRY, PAYMENTS_WEBHOOKS_OPTIONS } from './payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from './payments-webhooks.options.js';
import type { PaymentsRuntime } from '../core/payments.runtime.js';
import { createPaymentEventContext, type PaymentIntentsRetriever } from './payment-event.context.js';
import type { PaymentEvent } from './payment-event.types.js';
import { PaymentEventsRegistry, type PaymentEventHandlerRegistration } from './payment-events.registry.js';
import { PAYMENTS_WEBHOOKS_LOGGER } from './payments-webhooks.messages.js';
import type { PaymentDeliveryListener } from './journal/payment-delivery-listener.interface.js';
import { notifyDeliveryListener, toHandlerRecords } from './journal/payment-delivery-listener.util.js';
import { IdempotencyStore } from './stores/idempotency-store.interface.js';
import { PaymentsInbox } from './transactional/payments-inbox.js';
import { WebhookLogSampler } from './webhook-log.sampler.js';
import { PaymentsTelemetry } from '../telemetry/payments.telemetry.js';

/** How one handler fared with one event. */
export type DispatchHandlerStatus = 'done' | 'skipped' | 'busy' | 'failed' | 'store_unavailable';

/** One handler's line of a `DispatchResult`. */
export interface DispatchHandlerResult {
  /** `ClassName.methodName`. */
  handler: string;
  status: DispatchHandlerStatus;
  /** How long the handler ran, when it ran. */
  durationMs?: number;
  /** The attempt number the handler saw (`ctx.deliveryAttempt`), when it ran. */
  attempt?: number;
  /** What the handler (status `failed`) or the store (status `store_unavailable`) threw. */
  error?: unknown;
}

/**
 * Outcome of one event:
 * - `handled`: every bound handler ran now or earlier;
 * - `duplicate`: every bound handler had already completed (a redelivery);
 * - `busy`: a handler is being run by a concurrent delivery (answer 409);
 * - `failed`: a handler threw; its claim was released so a redelivery runs it (answer 500);
 * - `unhandled`: no handler is bound to the event type (answer 200);
 * - `store_unavailable`: the idempotency store failed; nothing ran without a claim (answer 503).
 */
export type DispatchOutcome = 'handled' | 'duplicate' | 'busy' | 'failed' | 'unhandled' | 'store_unavailable';

/** What `PaymentEventsDispatcher.dispatch` returns. */
export interface DispatchResult {
  outcome: DispatchOutcome;
  handlers: DispatchHandlerResult[];
}

/** Facts about the delivery (or queued job) carrying the event. */
export interface DispatchMeta {
  receivedAt: Date;
  /** The queue's attempt number, when a worker dispatches. The store's claim count is used if higher. */
  deliveryAttempt?: number;
}

/**
 * Runs the handlers bound to a verified event, each at most once per event id: for each handler it
 * claims `${event.id}:${handlerId}` in the `IdempotencyStore`, runs the handler only if it got the
 * claim, and completes (success) or releases (failure) it. Handlers of one event run concurrently and
 * in isolation: one failing does not stop the others. Used inline by the controller and by the queue
 * worker.
 */
@Injectable()
export class PaymentEventsDispatcher {
  private readonly logger = new Logger(PAYMENTS_WEBHOOKS_LOGGER);
  /** 409 lines are sampled: a sender can repeat an in-flight delivery as often as it likes. */
  private readonly busyLog = new WebhookLogSampler({
    write: (line) => this.logger.warn(line),
    now: () => this.runtime.now(),
  });
  private readonly leaseMs: number;
  /** '' for the unnamed instance, '<name>:' for a named one: instances sharing a store never share a claim. */
  private readonly keyPrefix: string;
  private readonly retentionMs: number;
  private readonly listener: PaymentDeliveryListener | undefined;
  /** `webhooks.logDeliveries`: one compact line per dispatch; otherwise a dispatch that goes well logs nothing. */
  private readonly logDeliveries: boolean;

  constructor(
    @Inject(PAYMENTS_EVENTS_REGISTRY) private readonly registry: PaymentEventsRegistry,
    @Inject(IdempotencyStore) private readonly store: IdempotencyStore,
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions | false,
    @Inject(PAYMENTS_RUNTIME) private readonly runtime: PaymentsRuntime,
    @Inject(PAYMENTS_CLIENT) private readonly client: PaymentIntentsRetriever,
    @Optional() @Inject(PaymentsTelemetry) private readonly telemetry: PaymentsTelemetry = PaymentsTelemetry.disabled(),
    @Optional() @Inject(PaymentsInbox) private readonly inbox?: PaymentsInbox,
  ) {
    this.leaseMs = (webhooks ? webhooks.claimTtlSeconds : 300) * 1000;
    this.keyPrefix = webhooks ? webhooks.storeKeyPrefix : '';
    this.retentionMs = (webhooks ? webhooks.retentionSeconds : DEFAULT_RETENTION_SECONDS) * 1000;
    this.listener = webhooks ? webhooks.deliveryListener : undefined;
    this.logDeliveries = webhooks ? webhooks.logDeliveries === true : false;
  }

  /** Runs every handler bound to `event` that has not completed it yet, and sums up what happened. */
  async dispatch(event: PaymentEvent, meta: { receivedAt: Date; deliveryAttempt?: number }): Promise<DispatchResult> {
    const handlers = this.registry.handlersFor(event.event);
    if (handlers.length === 0) {
      if (this.logDeliveries)
        this.logger.log(`Event ${event.id} (${event.event}) unhandled: no handler is bound to this type`);
      else this.logger.debug(`Event ${event.id} (${event.event}) has no handler: acknowledged`);
      if (this.listener) this.notify(event, meta, 'unhandled', []);
      return { outcome: 'unhandled', handlers: [] };
    }
    // Each handler in its own span (a child of the delivery or queue span), its run timed by the metric.
    // One handler (the usual case) is awaited alone: no Promise.all and its per-element closures.
    const results =
      handlers.length === 1
        ? [await this.runHandler(handlers[0]!, event, meta)]
        : await Promise.all(handlers.map((handler) => this.runHandler(handler, event, meta)));
    const outcome = aggregate(results);
    if (this.logDeliveries) this.logger.log(deliveryLine(event, outcome, results));
    else if (outcome === 'duplicate') {
      this.logger.log(`Event ${event.id} (${event.event}) is a duplicate: every handler had already completed it`);
    }
    if (this.listener) this.notify(event, meta, outcome, results);
    return { outcome, handlers: results };
  }

  private runHandler(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    meta: DispatchMeta,
  ): Promise<DispatchHandlerResult> {
    return this.telemetry.runHandler(handler.id, event, () => this.runOne(handler, event, meta));
  }

  /** Tells the opt-in `webhooks.deliveryListener` what this dispatch did. */
  private notify(
    event: PaymentEvent,
    meta: DispatchMeta,
    outcome: DispatchOutcome,
    results: DispatchHandlerResult[],
  ): void {
    notifyDeliveryListener(
      this.listener,
      'onDispatch',
      {
        eventId: event.id,
        type: event.event,
        outcome,
        handlers: toHandlerRecords(results),
        ...(meta.deliveryAttempt === undefined ? {} : { deliveryAttempt: meta.deliveryAttempt }),
        receivedAt: meta.receivedAt,
        finishedAt: new Date(this.runtime.now()),
      },
      this.logger,
    );
  }

  /** Claim, run, then complete or release one handler. Never rejects. */
  protected async runOne(
    handler: PaymentEventHandlerRegistration,
    event: PaymentEvent,
    meta: DispatchMeta,
  ): Promise<DispatchHandlerResult> {
    const key = `${this.keyPrefix}${event.id}:${handler.id}`;
    let claim;
    try {
      claim = await this.store.claim(key, this.leaseMs);
    } catch (error) {
      this.logger.error(
        `Idempotency store unavailable while claiming ${whereOf(event, handler)}: not run (${describe(error)})`,
      );
      this.telemetry.storeError('claim');
      return { handler: handler.id, status: 'store_unavailable', error };
    }
    if (claim.status === 'done') {
      // Not logged: the dispatch's outcome ('duplicate') says it once for all its handlers.
      return { handler: handler.id, status: 'skipped' };
    }
    if (claim.status === 'busy') {
      this.busyLog.log('busy', `Busy ${whereOf(event, handler)}: a concurrent delivery is running it`);
      return { handler: handler.id, status: 'busy' };
    }

    const attempt = Math.max(claim.attempt, meta.deliveryAttempt ?? 1);
    const ctx = createPaymentEventContext(event, this.client, attempt, meta.receivedAt);
    // Transactional handlers: the inbox runs them in a PostgreSQL transaction with their completion record.
    if (this.inbox?.covers(handler)) return this.inbox.run(handler, event, ctx, key, claim.token);
    const started = this.runtime.now();
    try {
      await handler.invoke(event, ctx);
    } catch (error) {
      const durationMs = this.runtime.now() - started;
      this.logger.error(
        `Failed ${whereOf(event, handler)} in ${durationMs} ms (attempt ${attempt}): ${describe(error)}; claim released for redelivery`,
        error instanceof Error ? error.stack : undefined,
      );
      try {
        await this.store.release(key, claim.token);
      } catch (releaseError) {
        // The lease then expires after claimTtlSeconds and a later delivery runs the handler again.
        this.logger.error(`Could not release the claim of ${whereOf(event, handler)}: ${describe(releaseError)}`);
        this.telemetry.storeError('release');
      }
      return { handler: handler.id, status: 'failed', durationMs, attempt, error };
    }
    const durationMs = this.runtime.now() - started;
    try {
      await this.store.complete(key, claim.token, this.retentionMs);
    } catch (error) {
      // The handler ran but its completion is not recorded: answer 503 so the service retries. The
      // lease keeps concurrent deliveries out until it expires; after that the handler may run again.
      this.logger.error(
        `Handled ${whereOf(event, handler)} in ${durationMs} ms, but the store could not record it: ${describe(error)}`,
      );
      this.telemetry.storeError('complete');
      return { handler: handler.id, status: 'store_unavailable', durationMs, attempt, error };
    }
    // No line per handled event (even at debug, which Nest's default logger prints): `logDeliveries`
    // opts in to one line per dispatch. docs/logging.md has the policy and its measured cost.
    return { handler: handler.id, status: 'done', durationMs, attempt };
  }
}

/** `event <id> (<type>) handler <id>`, for the lines about one handler's run (built only when logged). */
function whereOf(event: PaymentEvent, handler: PaymentEventHandlerRegistration): string {
  return `event ${event.id} (${event.event}) handler ${handler.id}`;
}

/** The `logDeliveries` line: `Event <id> (<type>) <outcome>: <handler> <status> [in N ms] [(attempt n)], ...`. */
function deliveryLine(
  event: PaymentEvent,
  outcome: DispatchOutcome,
  results: readonly DispatchHandlerResult[],
): string {
  const parts = results.map((r) => {
    const took = r.durationMs === undefined ? '' : ` in ${r.durationMs} ms`;
    const attempt = r.attempt === undefined || r.attempt === 1 ? '' : ` (attempt ${r.attempt})`;
    return `${r.handler} ${r.status}${took}${attempt}`;
  });
  return `Event ${event.id} (${event.event}) ${outcome}: ${parts.join(', ')}`;
}

/** The worst status wins: store_unavailable > failed > busy > handled; all skipped is a duplicate. One pass. */
function aggregate(results: DispatchHandlerResult[]): DispatchOutcome {
  let failed = false;
  let busy = false;
  let allSkipped = true;
  for (const { status } of results) {
    if (status === 'store_unavailable') return 'store_unavailable';
    if (status === 'failed') failed = true;
    else if (status === 'busy') busy = true;
    if (status !== 'skipped') allSkipped = false;
  }
  if (failed) return 'failed';
  if (busy) return 'busy';
  return allSkipped ? 'duplicate' : 'handled';
}

/** Name and message of an error, for a log line (handlers' errors are the merchant's own text). */
function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error;
}
