import { Inject, Injectable, Optional } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
// This entry point (`nestjs-payments/health`) is the only place that loads @nestjs/terminus, an
// optional peer: an app that never imports it never needs terminus.
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { isDefaultPaymentsInstance, PAYMENTS_INSTANCE_NAME } from '../core/payments.instance.js';
import { PaymentsError } from '../errors/payments.errors.js';
import { PaymentsTelemetry } from '../telemetry/payments.telemetry.js';
import { PaymentEventsQueue } from '../webhooks/queue/payment-events.queue.js';
import { IdempotencyStore } from '../webhooks/contracts/idempotency-store.interface.js';

/** Options of one health check. */
export interface PaymentsHealthCheckOptions {
  /** How long each part (store, queue) may take to answer before it counts as down. Default 1000 ms. */
  timeoutMs?: number;
}

/** What the check says about the idempotency store. */
export interface PaymentsStoreHealth {
  status: 'up' | 'down';
  /** The store's class, e.g. `RedisIdempotencyStore` (`none` when the receiver is off). */
  store: string;
  /** Why it is down: `timeout`, or the error's class name and code. Never a message, a key or an address. */
  error?: string;
}

/** What the check says about the BullMQ queue of `webhooks.processing: { queue }`. */
export interface PaymentsQueueHealth {
  status: 'up' | 'down';
  /** `inline` when no queue is configured (nothing to check). */
  mode: 'inline' | 'queue';
  /** Queue name, in queue mode. */
  name?: string;
  /** Events in the failed set (handlers failed on every attempt), when Redis answered. */
  failed?: number;
  /** This instance's worker: running, stopped, or off (`worker: false`). */
  worker?: 'running' | 'stopped' | 'off';
  error?: string;
}

/** What the check says about one named instance (`forRoot({ name })`). */
export interface PaymentsInstanceHealth {
  status: 'up' | 'down';
  store: PaymentsStoreHealth;
  queue: PaymentsQueueHealth;
}

const DEFAULT_TIMEOUT_MS = 1000;

/**
 * A `@nestjs/terminus` health indicator for the payments module: it pings the idempotency store (Redis:
 * PING; PostgreSQL: a query; the in-memory store is always up) and, in queue mode, the queue's Redis
 * connection. `down` when either does not answer within `timeoutMs`, so the health endpoint answers
 * 503 and an orchestrator stops routing webhooks to this instance.
 *
 * @example
 * // health.module.ts
 * @Module({ imports: [TerminusModule], controllers: [HealthController], providers: [PaymentsHealthIndicator] })
 * // health.controller.ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.payments.isHealthy('payments')]); }
 */
@Injectable()
export class PaymentsHealthIndicator {
  constructor(
    private readonly healthIndicatorService: HealthIndicatorService,
    @Optional() @Inject(IdempotencyStore) private readonly store?: IdempotencyStore,
    @Optional() @Inject(PaymentEventsQueue) private readonly queue?: PaymentEventsQueue,
    @Optional() @Inject(PaymentsTelemetry) private readonly telemetry?: PaymentsTelemetry,
    @Optional() private readonly modules?: ModulesContainer,
  ) {}

  /**
   * Checks the store and the queue of the unnamed instance and of every named one. The result sits
   * under `key` (default `'payments'`): `{ payments: { status, store: { status, store, error? },
   * queue: { status, mode, name?, failed?, worker?, error? }, instances?: { <name>: { status, store,
   * queue } } } }`; down (503) when any instance's store or queue is.
   */
  async isHealthy<const Key extends string = 'payments'>(
    key?: Key,
    options: PaymentsHealthCheckOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.healthIndicatorService.check((key ?? 'payments') as Key);
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const [store, queue, instances] = await Promise.all([
      this.checkStore(timeoutMs),
      this.checkQueue(timeoutMs),
      this.checkNamedInstances(timeoutMs),
    ]);
    const data: {
      store: PaymentsStoreHealth;
      queue: PaymentsQueueHealth;
      instances?: Record<string, PaymentsInstanceHealth>;
    } = instances === undefined ? { store, queue } : { store, queue, instances };
    const up =
      store.status === 'up' &&
      queue.status === 'up' &&
      Object.values(instances ?? {}).every((instance) => instance.status === 'up');
    return up ? indicator.up(data) : indicator.down(data);
  }

  /**
   * Every named instance's store and queue (`forRoot({ name })`), under `instances.<name>`; undefined
   * when the app has none. Found in the app's modules, so the indicator needs no token per name.
   */
  protected async checkNamedInstances(timeoutMs: number): Promise<Record<string, PaymentsInstanceHealth> | undefined> {
    const named: Array<[string, IdempotencyStore | undefined, PaymentEventsQueue | undefined]> = [];
    for (const module of this.modules?.values() ?? []) {
      const name = module.providers.get(PAYMENTS_INSTANCE_NAME)?.instance as string | undefined;
      if (typeof name !== 'string' || isDefaultPaymentsInstance(name)) continue;
      const store = module.providers.get(IdempotencyStore)?.instance as IdempotencyStore | undefined;
      const queue = module.providers.get(PaymentEventsQueue)?.instance as PaymentEventsQueue | undefined;
      // A receiver registered apart (PaymentsWebhooksModule) holds the store of an instance whose
      // PaymentsModule has none: one entry per name, the one with the receiver's parts.
      const same = named.findIndex(([known]) => known === name);
      if (same === -1) named.push([name, store ?? undefined, queue ?? undefined]);
      else if (store !== undefined || queue !== undefined) named[same] = [name, store ?? undefined, queue ?? undefined];
    }
    if (named.length === 0) return undefined;
    const checked = await Promise.all(
      named.map(async ([name, store, queue]): Promise<[string, PaymentsInstanceHealth]> => {
        const [storeHealth, queueHealth] = await Promise.all([
          this.checkStore(timeoutMs, store),
          this.checkQueue(timeoutMs, queue),
        ]);
        const status = storeHealth.status === 'up' && queueHealth.status === 'up' ? 'up' : 'down';
        return [name, { status, store: storeHealth, queue: queueHealth }];
      }),
    );
    return Object.fromEntries(checked);
  }

  /** The store's answer to `ping()`, within `timeoutMs`. */
  protected async checkStore(timeoutMs: number, store = this.store): Promise<PaymentsStoreHealth> {
    if (!store) return { status: 'up', store: 'none' };
    const name = store.constructor?.name || 'IdempotencyStore';
    if (typeof store.ping !== 'function') return { status: 'up', store: name };
    try {
      await withTimeout(store.ping(), timeoutMs);
      return { status: 'up', store: name };
    } catch (error) {
      this.telemetry?.storeError('ping');
      return { status: 'down', store: name, error: describe(error) };
    }
  }

  /** The queue's round trip to Redis, within `timeoutMs`; always up in inline mode. */
  protected async checkQueue(timeoutMs: number, queue = this.queue): Promise<PaymentsQueueHealth> {
    if (!queue || !queue.enabled) return { status: 'up', mode: 'inline' };
    const name = queue.name;
    try {
      const { failed, worker } = await withTimeout(queue.ping(), timeoutMs);
      return { status: 'up', mode: 'queue', name, failed, worker };
    } catch (error) {
      return { status: 'down', mode: 'queue', name, error: describe(error) };
    }
  }
}

class HealthTimeoutError extends PaymentsError {
  override readonly name = 'HealthTimeoutError';
}

/** Rejects with a `HealthTimeoutError` when `promise` takes longer than `ms` (the timer never holds the process). */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HealthTimeoutError()), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** `timeout`, or the error's class name and system code: an error message may name hosts or quote a URL with a password. */
function describe(error: unknown): string {
  if (error instanceof HealthTimeoutError) return 'timeout';
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? `${error.name} ${code}` : error.name;
  }
  return typeof error;
}
