import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
// Types only: bullmq is an optional peer, loaded with `await import('bullmq')` when the worker starts.
import type { Job, Worker } from 'bullmq';
import { PaymentsTelemetry } from '../../telemetry/payments.telemetry.js';
import type { DispatchOutcome, PaymentEventsDispatch } from '../contracts/dispatch-result.types.js';
import { PAYMENT_EVENTS_DISPATCHER, PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { PaymentEventJobError } from './payment-event-job.error.js';
import type { PaymentEventJobData } from './payment-event-job.interface.js';
import { loadBullmq } from './bullmq.loader.js';
import { PAYMENTS_QUEUE_LOGGER } from './payments-queue.constants.js';
import type { ResolvedPaymentsQueueOptions as ResolvedQueueOptions } from '../contracts/payments-queue.options.js';
import { closeOwnedClients, resolveWorkerConnection, type DuplicableRedisClient } from './queue-connection.util.js';

/** Outcomes after which the worker throws, so BullMQ retries the job with backoff. */
const RETRY_OUTCOMES: ReadonlySet<DispatchOutcome> = new Set<DispatchOutcome>([
  'failed',
  'busy',
  'store_unavailable',
  'retrieve_failed',
]);

/**
 * The worker of the queue part (`webhooks.processing: { queue }` with `worker` on, the default): it
 * dispatches each job to the `@OnPaymentEvent` handlers of its instance through the idempotency store
 * (a handler that completed never runs again) and throws when one did not finish, so BullMQ retries
 * the job with the configured backoff; exhausted jobs stay in the failed set (`PaymentEventsQueue`).
 *
 * It starts on application bootstrap, once every module is initialised (the handlers are discovered
 * in `onModuleInit`, and a job already waiting in Redis must not be dispatched before), and stops
 * taking jobs before shutdown, letting the running ones finish, before the HTTP server closes. It has
 * its own Redis connection, apart from the producer's.
 */
@Injectable()
export class PaymentEventsWorker implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(PAYMENTS_QUEUE_LOGGER);
  private readonly settings: ResolvedQueueOptions | undefined;
  private worker: Worker<PaymentEventJobData> | undefined;
  private owned: DuplicableRedisClient[] = [];
  private starting: Promise<void> | undefined;

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions,
    @Inject(PAYMENT_EVENTS_DISPATCHER) private readonly dispatcher: PaymentEventsDispatch,
    @Optional() @Inject(PaymentsTelemetry) private readonly telemetry: PaymentsTelemetry = PaymentsTelemetry.disabled(),
  ) {
    const queue = webhooks.processing !== 'inline' ? webhooks.processing.queue : undefined;
    this.settings = queue && queue.worker ? queue : undefined;
  }

  /** 'off' when this instance runs no worker (`worker: false`), else whether it is taking jobs. */
  get status(): 'running' | 'stopped' | 'off' {
    if (!this.settings) return 'off';
    return this.worker?.isRunning() ? 'running' : 'stopped';
  }

  /** Starts taking jobs (nothing with `worker: false` or inline processing). */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings) return;
    this.starting ??= this.start(this.settings);
    await this.starting;
  }

  /** Stops taking jobs and lets the running ones finish, before the HTTP server closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.close();
  }

  /** Closes the worker's connection if the module created it. */
  async onApplicationShutdown(): Promise<void> {
    await this.beforeApplicationShutdown();
    const owned = this.owned;
    this.owned = [];
    await closeOwnedClients(owned);
  }

  private async start(settings: ResolvedQueueOptions): Promise<void> {
    const bullmq = await loadBullmq(settings);
    const { worker: connection, owned } = resolveWorkerConnection(settings.connection);
    this.owned = owned;
    this.worker = new bullmq.Worker<PaymentEventJobData>(settings.name, (job) => this.run(job), {
      connection,
      prefix: settings.prefix,
      concurrency: settings.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      // One stall (a worker died mid-job) puts the job back; a second one fails it for an operator.
      maxStalledCount: 1,
    });
    this.worker.on('error', (error) => this.logger.error(`Worker of ${settings.name}: ${error.message}`));
    this.worker.on('failed', (job, error) => {
      if (!job) return;
      const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1);
      const line = `Event ${job.id} (${job.name}) attempt ${job.attemptsMade}: ${error.message}`;
      if (exhausted) this.logger.error(`${line}; attempts exhausted, kept in the failed set`);
      else this.logger.warn(`${line}; will retry`);
    });
    this.logger.log(`Queue ${settings.name}: worker started (concurrency ${settings.concurrency})`);
  }

  /** One job: dispatch with per-handler claims, and throw unless every handler finished. */
  private async run(job: Job<PaymentEventJobData>): Promise<{ outcome: DispatchOutcome }> {
    const { event, receivedAt, traceparent } = job.data;
    const attempt = job.attemptsMade + 1;
    return this.telemetry.processJob(job.queueName, event, attempt, traceparent, async () => {
      const result = await this.dispatcher.dispatch(event, {
        receivedAt: new Date(receivedAt),
        deliveryAttempt: attempt,
      });
      if (RETRY_OUTCOMES.has(result.outcome)) throw PaymentEventJobError.of(event, result);
      return { outcome: result.outcome };
    });
  }
}
