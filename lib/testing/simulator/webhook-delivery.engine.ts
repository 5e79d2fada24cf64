import { randomUUID } from 'node:crypto';
import type * as http from 'node:http';
import { postDelivery, type PostOutcome } from './simulator-delivery.post.js';
import { ordered, type DeliveryOrder } from './simulator-controls.js';
import type { SimulatedWebhookAttempt, SimulatedWebhookRequest } from './payments-simulator.options.js';
import { PaymentsError } from '../../errors/payments.errors.js';
import { SIMULATOR_MESSAGES, stillPendingMessage } from './payments-simulator.messages.js';
import type {
  DeliveryBatchItem,
  DeliveryEngineDeps,
  DeliveryTarget,
  RequestState,
  Unit,
} from './webhook-delivery.types.js';
import { pendingSummary, PENDING_STATUSES } from './webhook-delivery.types.js';

export type { DeliveryBatchItem, DeliveryEngineDeps, DeliveryTarget } from './webhook-delivery.types.js';

/**
 * Delivers events to endpoints as the service would: one WebhookRequest per event and endpoint, each
 * tried until a 2xx or until the retry schedule is exhausted, every attempt recorded and freshly
 * signed over the same body. Owns every timer and socket it opens, so `stop()` leaves nothing behind.
 */
export class WebhookDeliveryEngine {
  readonly #deps: DeliveryEngineDeps;
  readonly #requests = new Map<string, RequestState>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #inflight = new Set<http.ClientRequest>();
  #held: Unit[] = [];
  #idleWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  /** Requests held, queued, scheduled or in flight. */
  readonly #pending = new Set<RequestState>();
  #stopped = false;

  constructor(deps: DeliveryEngineDeps) {
    this.#deps = deps;
    deps.controls.onRelease = (order) => this.#release(order);
  }

  /** Creates the WebhookRequests of one batch and starts (or holds) them as the controls say. */
  enqueue(batch: DeliveryBatchItem[]): void {
    const { controls } = this.#deps;
    const { copies, mode } = controls.duplicates;
    const groups: Unit[][] = batch.map((item) =>
      item.targets.flatMap((target) => {
        // Dropped for good: the endpoint never hears of it (no request, no attempt, no retry).
        if (controls.takeDrop(this.#deps.random)) return [];
        const body = item.bodyFor(target);
        const requests = Array.from({ length: copies }, () => this.#create(item, target, body));
        return mode === 'sequential' ? [requests] : requests.map((r) => [r]);
      }),
    );
    if (controls.holding) {
      for (const unit of groups.flat()) {
        for (const request of unit) this.#setStatus(request, 'held');
        this.#held.push(unit);
      }
      return;
    }
    const order = controls.batchOrder;
    if (order === undefined) {
      for (const unit of groups.flat()) void this.#runUnit(unit);
    } else {
      void this.#runChain(ordered(groups, order, this.#deps.random).flat());
    }
  }

  /** Every WebhookRequest, oldest first, with its attempts. */
  list(): Array<SimulatedWebhookRequest & { attempts: SimulatedWebhookAttempt[] }> {
    return [...this.#requests.values()].map((s) => ({ ...s.record, attempts: s.attempts.map((a) => ({ ...a })) }));
  }

  /** The request and its endpoint's account, or undefined. */
  get(
    id: string,
  ): { record: SimulatedWebhookRequest; attempts: SimulatedWebhookAttempt[]; account: string } | undefined {
    const state = this.#requests.get(id);
    if (state === undefined) return undefined;
    return {
      record: { ...state.record },
      attempts: state.attempts.map((a) => ({ ...a })),
      account: state.target.account,
    };
  }

  /** Requests of one account, oldest first. */
  listFor(account: string): SimulatedWebhookRequest[] {
    return [...this.#requests.values()].filter((s) => s.target.account === account).map((s) => ({ ...s.record }));
  }

  /**
   * Sends the request again now (same body, same event id, fresh signature), restarting its retry
   * schedule. Refused while it is held, queued or being delivered.
   */
  resend(id: string): 'resent' | 'busy' | 'unknown' {
    const state = this.#requests.get(id);
    if (state === undefined) return 'unknown';
    if (['held', 'queued', 'delivering'].includes(state.record.status)) return 'busy';
    if (state.retryTimer !== undefined) this.#clear(state.retryTimer);
    state.retryTimer = undefined;
    state.seriesAttempts = 0;
    void this.#attempt(state);
    return 'resent';
  }

  /** Whether no delivery is held, queued, scheduled or in flight. */
  get idle(): boolean {
    return this.#pending.size === 0;
  }

  /** Resolves once idle; rejects after `timeoutMs` (default 10 s) with the pending counts. */
  waitForIdle(timeoutMs = 10_000): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#idleWaiters = this.#idleWaiters.filter((w) => w !== waiter);
        reject(new PaymentsError(stillPendingMessage(timeoutMs, pendingSummary(this.#requests.values()))));
      }, timeoutMs);
      const waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.#idleWaiters.push(waiter);
    });
  }

  /** Cancels every timer and aborts every in-flight attempt. */
  stop(): void {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const request of this.#inflight) request.destroy();
    this.#inflight.clear();
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const waiter of waiters) waiter.reject(new PaymentsError(SIMULATOR_MESSAGES.stoppedWhilePending));
  }

  #create(item: DeliveryBatchItem, target: DeliveryTarget, body: string): RequestState {
    const record: SimulatedWebhookRequest = {
      id: randomUUID(),
      event_id: item.eventId,
      event: item.event,
      webhook_id: target.id,
      url: target.url,
      status: 'queued',
      attempt_count: 0,
      last_status_code: null,
      created_at: this.#iso(),
      next_attempt_at: null,
      body,
    };
    let markFirstAttemptDone: () => void = () => undefined;
    const firstAttemptDone = new Promise<void>((resolve) => (markFirstAttemptDone = resolve));
    const state: RequestState = {
      record,
      attempts: [],
      target,
      seriesAttempts: 0,
      retryTimer: undefined,
      firstAttemptDone,
      markFirstAttemptDone,
    };
    this.#requests.set(record.id, state);
    this.#pending.add(state);
    return state;
  }

  #release(order: DeliveryOrder): void {
    const units = ordered(this.#held, order, this.#deps.random);
    this.#held = [];
    for (const unit of units) for (const request of unit) this.#setStatus(request, 'queued');
    void this.#runChain(units);
  }

  async #runChain(units: Unit[]): Promise<void> {
    for (const unit of units) await this.#runUnit(unit);
  }

  /** Starts each request of the unit after the previous one's first attempt finished. */
  async #runUnit(unit: Unit): Promise<void> {
    for (const state of unit) {
      if (this.#stopped) return;
      const delay = this.#deps.controls.takeDelay();
      if (delay > 0) {
        this.#setStatus(state, 'scheduled');
        state.record.next_attempt_at = this.#iso(delay);
        state.retryTimer = this.#setTimer(() => {
          state.retryTimer = undefined;
          void this.#attempt(state);
        }, delay);
      } else {
        void this.#attempt(state);
      }
      await state.firstAttemptDone;
    }
  }

  async #attempt(state: RequestState): Promise<void> {
    if (this.#stopped) return;
    const { record } = state;
    this.#setStatus(state, 'delivering');
    record.next_attempt_at = null;
    record.attempt_count += 1;
    state.seriesAttempts += 1;
    const attempt: SimulatedWebhookAttempt = {
      id: randomUUID(),
      webhook_request_id: record.id,
      attempt: record.attempt_count,
      started_at: this.#iso(),
      finished_at: null,
      status_code: null,
      error: null,
    };
    state.attempts.push(attempt);

    const headers = this.#deps.sign(
      record.body,
      state.target.secret,
      record.event_id,
      Math.floor(this.#deps.now() / 1000),
    );
    const outcome = await this.#post(record.url, headers, record.body);
    state.markFirstAttemptDone();
    if (this.#stopped) return;

    attempt.finished_at = this.#iso();
    if ('status' in outcome) {
      attempt.status_code = outcome.status;
      record.last_status_code = outcome.status;
      if (outcome.status >= 200 && outcome.status < 300) {
        this.#setStatus(state, 'succeeded');
        this.#settled();
        return;
      }
      attempt.error = `http_${outcome.status}`;
    } else {
      attempt.error = outcome.error;
    }

    const delay = this.#deps.retrySchedule[state.seriesAttempts - 1];
    if (delay === undefined) {
      this.#setStatus(state, 'failed');
      this.#settled();
      return;
    }
    this.#setStatus(state, 'scheduled');
    record.next_attempt_at = this.#iso(delay);
    state.retryTimer = this.#setTimer(() => {
      state.retryTimer = undefined;
      void this.#attempt(state);
    }, delay);
  }

  #post(url: string, headers: Record<string, string>, body: string): Promise<PostOutcome> {
    return postDelivery(url, headers, body, this.#deps.timeoutMs, this.#inflight);
  }

  /** Every status change goes through here, so `idle` is a counter and not a scan of every request. */
  #setStatus(state: RequestState, status: SimulatedWebhookRequest['status']): void {
    state.record.status = status;
    if (PENDING_STATUSES.has(status)) this.#pending.add(state);
    else this.#pending.delete(state);
  }

  #settled(): void {
    if (!this.idle) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  #setTimer(fn: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      fn();
    }, ms);
    this.#timers.add(timer);
    return timer;
  }

  #clear(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.#timers.delete(timer);
  }

  #iso(offsetMs = 0): string {
    return new Date(this.#deps.now() + offsetMs).toISOString();
  }
}
