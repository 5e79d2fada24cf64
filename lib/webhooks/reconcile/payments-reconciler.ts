import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Optional,
  type Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { PAYMENTS_CLIENT } from '../../client/payments-client.tokens.js';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { PaymentsTelemetry } from '../../telemetry/payments.telemetry.js';
import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import type { PaymentEventsDispatch } from '../contracts/dispatch-result.types.js';
import {
  IntentWatchStore,
  type WatchedIntent,
  type WatchedIntentKind,
} from '../contracts/intent-watch-store.interface.js';
import type { PaymentReconcileRecord } from '../contracts/payment-delivery-listener.interface.js';
import { PAYMENTS_DISPATCH_PLUGINS, type PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import { PAYMENT_EVENTS_DISPATCHER, PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import { webhooksLogger } from '../log/receiver.logger.js';
import type { ResolvedPaymentsReconcileOptions } from '../contracts/payments-reconcile.options.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { WatchedIntentRetrieve } from './watched-intent.retrieve.js';
import { retrieveBatch, pacingOf, type RetrievePacing } from './reconcile-batch.js';
import {
  describe,
  formatAge,
  keepLease,
  sweepLine,
  systemSleepRuntime,
  type ReconcileClient,
  type ReconcileSweepResult,
} from './reconcile-sweep.js';

export type { ReconcileClient, ReconcileSweepResult } from './reconcile-sweep.js';

/** Starts between two looks for new intents due mid-batch (fewer in a small batch). */
const FRESH_PEEK_EVERY = 10;

/** Which instance uses each watch list in this process: one list, one instance. */
const WATCH_LIST_OWNERS = new WeakMap<IntentWatchStore, string>();

/**
 * Closes the loop for intents whose terminal webhook never came (`webhooks.reconcile`): watches the
 * intents created through `PaymentsService`, retrieves each one that is due on a cadence that backs off
 * with age, and when one shows a terminal state, dispatches that state's event through the same
 * handlers with `ctx.source === 'reconciliation'`, claimed per (intent, state) and handler exactly as
 * the webhook of that state is, so whichever comes first runs and the other is a duplicate. One sweeper
 * at a time across instances (the watch store's lease).
 */
@Injectable()
export class PaymentsReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  /** Undefined when `webhooks.reconcile` is not set: the reconciler then does nothing. */
  private readonly options: ResolvedPaymentsReconcileOptions | undefined;
  /** The plug-ins told what the reconciler did with each intent (`onReconcile`: the delivery listener's). */
  private readonly reconcileHooks: readonly PaymentsDispatchPlugin[];
  /** This process as a lease owner. */
  private readonly owner = randomUUID();
  private timer: ReturnType<typeof setInterval> | undefined;
  private unsubscribe: (() => void) | undefined;
  private running: Promise<ReconcileSweepResult> | undefined;
  /** The module instance's name ('default' for the unnamed one). */
  private readonly instance: string;
  /** One check of one intent; undefined when `webhooks.reconcile` is not set. */
  private readonly checker: WatchedIntentRetrieve | undefined;
  /** The retrieves' pace, kept from one sweep to the next. */
  private readonly pacing: RetrievePacing | undefined;
  /** The last sweep read a full batch: more may be due, so the next one starts at once. */
  private batchWasFull = false;
  private closing = false;

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions,
    @Inject(IntentWatchStore) private readonly store: IntentWatchStore,
    @Inject(PAYMENT_EVENTS_DISPATCHER) private readonly dispatcher: PaymentEventsDispatch,
    @Inject(PAYMENTS_CLIENT) private readonly client: ReconcileClient,
    @Optional() @Inject(PAYMENTS_RUNTIME) private readonly runtime: PaymentsRuntime = systemSleepRuntime,
    @Optional() @Inject(PaymentsTelemetry) private readonly telemetry: PaymentsTelemetry = PaymentsTelemetry.disabled(),
    @Optional() @Inject(PAYMENTS_DISPATCH_PLUGINS) plugins: readonly PaymentsDispatchPlugin[] = [],
  ) {
    this.logger = webhooksLogger(webhooks);
    this.options = webhooks.reconcile;
    this.reconcileHooks = plugins.filter((plugin) => plugin.onReconcile);
    this.instance = webhooks.instance ?? 'default';
    this.checker =
      this.options &&
      new WatchedIntentRetrieve(store, dispatcher, client, runtime, this.options, this.logger, (record) =>
        this.reported(record),
      );
    // Shared with current-state handling's retrieves (the watch-list plug-in): one rate per instance.
    this.pacing = this.options && pacingOf(this.options);
  }

  /** Each plug-in's `onReconcile`; one that throws is logged and changes nothing. */
  private reported(record: PaymentReconcileRecord): void {
    for (const plugin of this.reconcileHooks) {
      try {
        plugin.onReconcile!(record);
      } catch (error) {
        this.logger.warn(
          `The ${plugin.name} plug-in's onReconcile threw and was ignored: ${error instanceof Error ? error.name : typeof error}`,
        );
      }
    }
  }

  /** Watches what the client creates, and sweeps every `everySeconds` (an unref()ed timer). */
  onApplicationBootstrap(): void {
    const options = this.options;
    if (!options) return;
    if (this.client === undefined || this.client === null) {
      // A receiver without its PaymentsModule (PaymentsWebhooksModule alone): nothing to retrieve with.
      if (options.byDefault) return;
      throw new PaymentsConfigurationError(
        'webhooks.reconcile',
        'needs the API client to retrieve intents, and this receiver has none',
        'register PaymentsModule.forRoot({ apiKey, environment, baseUrl, ... }) for this instance, or pass reconcile: false',
      );
    }
    const owner = WATCH_LIST_OWNERS.get(this.store);
    if (owner !== undefined && owner !== this.instance) {
      throw new PaymentsConfigurationError(
        'webhooks.reconcile.store',
        `is the watch list of the instance '${owner}' too: a watch list and its sweeper lease belong to one instance (its API key retrieves only its own intents)`,
        'give each instance its own IntentWatchStore, or omit reconcile.store (each instance then gets its own in the idempotency store engine)',
      );
    }
    WATCH_LIST_OWNERS.set(this.store, this.instance);
    this.logger.log(
      `Reconciliation on${options.byDefault ? ' (the default)' : ''}: first check ${options.afterMs / 1000} s after an intent is created, a sweep every ${options.everyMs / 1000} s (one sweeper at a time for this instance), at most ${Math.round(100_000 / options.minRetrieveGapMs) / 100} retrieves/s (${options.maxConcurrentRetrieves} at once) in batches of ${options.batchSize}, given up after ${formatAge(options.maxAgeMs)}; watch list: ${this.store.constructor?.name ?? 'custom'}; turn it off with webhooks: { reconcile: false }`,
    );
    this.unsubscribe = this.client.onIntentCreated?.((kind, intent, created) => {
      const wanted = options.watch === 'all' ? created.reconcile !== false : created.reconcile === true;
      if (!wanted) return undefined;
      // Awaited by create(): the intent is watched before its id reaches the caller.
      return this.watch(kind, intent.id).catch((error: unknown) =>
        this.logger.warn(`Could not watch ${kind} ${intent.id} for reconciliation: ${describe(error)}`),
      );
    });
    this.timer = setInterval(() => void this.sweepQuietly(), options.everyMs);
    this.timer.unref?.();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    if (this.options && WATCH_LIST_OWNERS.get(this.store) === this.instance) WATCH_LIST_OWNERS.delete(this.store);
    this.unsubscribe?.();
    if (this.timer !== undefined) clearInterval(this.timer);
    // A sweep in flight ends within about one interval (no check waits longer on its handlers); a
    // retrieve that hangs past that does not hold the shutdown: the wait is bounded.
    const running = this.running;
    if (running === undefined) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(1000, this.options?.everyMs ?? 0));
      timer.unref?.();
    });
    await Promise.race([running.then(undefined, () => undefined), bound]).finally(() => clearTimeout(timer));
  }

  get #options(): ResolvedPaymentsReconcileOptions {
    if (!this.options)
      throw new PaymentsConfigurationError(
        'webhooks.reconcile',
        'is not set',
        'pass webhooks: { ..., reconcile: {} } to reconcile intents',
      );
    return this.options;
  }

  /** Starts watching an intent (first check `afterSeconds` from now). Done for you on create. */
  async watch(kind: WatchedIntentKind, id: string): Promise<void> {
    const now = this.runtime.now();
    // Canonical, as the dispatcher keys it: a webhook naming the intent in upper case forgets this entry.
    const canonical = id.toLowerCase();
    await this.store.watch({
      kind,
      id: canonical,
      createdAt: now,
      nextCheckAt: now + this.#options.afterMs,
      checks: 0,
    });
  }

  /**
   * One sweep now (the timer calls it; tests and an operator's endpoint may too): if this instance holds
   * the sweeper lease, checks up to `batchSize` due intents, at most `maxRetrievesPerSecond`.
   */
  sweep(): Promise<ReconcileSweepResult> {
    // One sweep at a time in this process: a second call shares the running one.
    this.running ??= this.telemetry
      .reconcileSweep(() => this.sweepOnce())
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async sweepQuietly(): Promise<void> {
    if (this.closing) return;
    try {
      await this.sweep();
    } catch (error) {
      this.logger.warn(`Reconciliation sweep failed: ${describe(error)}`);
      return;
    }
    // A backlog: sweep on at the retrieve rate rather than idle until the next tick.
    if (this.batchWasFull && !this.closing) setTimeout(() => void this.sweepQuietly(), 0).unref?.();
  }

  private async sweepOnce(): Promise<ReconcileSweepResult> {
    const result: ReconcileSweepResult = {
      swept: false,
      checked: 0,
      reconciled: 0,
      settled: 0,
      pending: 0,
      gaveUp: 0,
      gone: 0,
    };
    if (!this.options) return result;
    this.batchWasFull = false;
    const { batchSize, minRetrieveGapMs, everyMs } = this.options;
    // Held for the longest a sweep should take, and a sweep interval more; renewed while it runs.
    const leaseMs = batchSize * minRetrieveGapMs + 2 * everyMs;
    let due: WatchedIntent[];
    // The lease runs from when it was asked for: a slow answer (or a slow read of the due list) never
    // lets this process check intents on a lease that has already ended.
    const askedAt = this.runtime.now();
    try {
      if (!(await this.store.lease(this.owner, leaseMs))) return result;
      result.swept = true;
      due = await this.store.due(this.runtime.now(), batchSize);
    } catch (error) {
      this.logger.warn(
        `Reconciliation: the watch store is unavailable (${describe(error)}); next sweep in ${everyMs / 1000} s`,
      );
      return { ...result, stopped: 'store_unavailable' };
    }
    this.batchWasFull = due.length >= batchSize;
    const lease = keepLease(this.store, this.owner, leaseMs, () => this.runtime.now(), askedAt);
    try {
      const check = (intent: WatchedIntent) =>
        this.checker!.check(intent, result).catch((error: unknown) => {
          this.logger.warn(`Reconciliation: the watch store is unavailable (${describe(error)})`);
          return 'store_unavailable' as const;
        });
      const every = Math.min(FRESH_PEEK_EVERY, Math.ceil(batchSize / 2));
      const fresh = { every, peek: async () => this.store.due(this.runtime.now(), every) };
      const stopped = await retrieveBatch(due, this.pacing!, this.runtime, lease, check, fresh);
      if (stopped) {
        result.stopped = stopped;
        this.batchWasFull = false;
      }
    } finally {
      lease.stop();
    }
    if (result.checked > 0 || result.stopped) this.logger.log(sweepLine(result));
    return result;
  }
}
