import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
// Types only: bullmq is an optional peer, loaded with `await import('bullmq')` when queue mode is on.
import type { Job, Queue, Worker } from 'bullmq';
import { DEFAULT_RETENTION_SECONDS } from '../../core/payments.defaults.js';
import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../payments-webhooks.options.js';
import type { PaymentEvent } from '../payment-event.types.js';
import { PaymentEventsDispatcher, type DispatchOutcome } from '../payment-events.dispatcher.js';
import { PaymentEventJobError } from './payment-event-job.error.js';
import { PaymentsTelemetry } from '../../telemetry/payments.telemetry.js';
import type { FailedPaymentEvent, PaymentEventEnqueueOutcome, PaymentEventJobData } from './payment-event-job.interface.js';
import { resolveQueueConnections, usesKeyPrefix, type DuplicableRedisClient } from './queue-connection.util.js';

type ResolvedQueueOptions = Exclude<ResolvedWebhooksOptions['processing'], 'inline'>['queue'];

/** Name of the Nest `Logger` of the queue and its worker. */
export const PAYMENTS_QUEUE_LOGGER = 'PaymentsWebhooksQueue';

/** Outcomes after which the worker throws, so BullMQ retries the job with backoff. */
const RETRY_OUTCOMES: ReadonlySet<DispatchOutcome> = new Set<DispatchOutcome>(['failed', 'busy', 'store_unavailable']);

/** Completed jobs kept at most this many (besides the age limit), to bound Redis memory. */
const COMPLETED_JOBS_KEPT = 100_000;

/**
 * The BullMQ queue of verified events (`webhooks.processing: { queue }`), and the operator's view of
 * it. Inject it to list the events whose handlers still failed after every attempt and to replay one:
 *
 * @example
 * constructor(private readonly events: PaymentEventsQueue) {}
 * const failed = await this.events.failed();        // [{ eventId, type, failedReason, attemptsMade, failedAt }]
 * await this.events.replay(failed[0].eventId);       // back to the queue, with a fresh set of attempts
 *
 * Each job's id is the event id, so the queue itself refuses a second job for an event it still
 * holds. Unless `worker: false`, this instance also runs a worker that dispatches each job to the
 * `@OnPaymentEvent` handlers through the idempotency store (a handler that completed never runs again)
 * and throws when one did not finish, so BullMQ retries it with the configured backoff. Exhausted jobs
 * stay in the failed set. Completed jobs are kept for `retentionSeconds` (at most 100000 of them).
 *
 * In inline mode the service exists but holds no queue: its methods reject with a
 * `PaymentsConfigurationError`.
 */
@Injectable()
export class PaymentEventsQueue implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(PAYMENTS_QUEUE_LOGGER);
  private readonly settings: ResolvedQueueOptions | undefined;
  private readonly retentionSeconds: number;
  private queue: Queue<PaymentEventJobData> | undefined;
  private worker: Worker<PaymentEventJobData> | undefined;
  private owned: DuplicableRedisClient[] = [];
  private workerConnection: object | undefined;
  private bullmq: typeof import('bullmq') | undefined;
  private starting: Promise<void> | undefined;
  private stopObservingFailedJobs: () => void = () => undefined;

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions | false,
    @Optional() private readonly dispatcher?: PaymentEventsDispatcher,
    @Optional() @Inject(PaymentsTelemetry) private readonly telemetry: PaymentsTelemetry = PaymentsTelemetry.disabled(),
  ) {
    this.settings = webhooks && webhooks.processing !== 'inline' ? webhooks.processing.queue : undefined;
    this.retentionSeconds = webhooks ? webhooks.retentionSeconds : DEFAULT_RETENTION_SECONDS;
  }

  /** Whether queued processing is configured. */
  get enabled(): boolean {
    return this.settings !== undefined;
  }

  /** Name of the BullMQ queue, when queued processing is configured. */
  get name(): string | undefined {
    return this.settings?.name;
  }

  /** Loads bullmq and opens the producer, so that deliveries can be enqueued once the app listens. */
  async onModuleInit(): Promise<void> {
    if (!this.settings) return;
    this.starting ??= this.start(this.settings);
    await this.starting;
  }

  /**
   * Starts the worker only once every module is initialised: the `@OnPaymentEvent` handlers are
   * discovered in `onModuleInit`, and a job already waiting in Redis must not be dispatched before.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings) return;
    await this.onModuleInit();
    if (this.settings.worker && !this.worker) this.startWorker(this.settings);
  }

  /**
   * Adds `event` as a job whose id is the event id, and resolves once Redis has accepted it.
   * `'duplicate'` when a job for this event is already queued, running, completed (within its
   * retention) or failed. Rejects when Redis does not accept it within `enqueueTimeoutMs`.
   */
  async enqueue(event: PaymentEvent, receivedAt: Date): Promise<PaymentEventEnqueueOutcome> {
    const { queue, settings } = this.ready();
    // A producer span; its traceparent travels in the job so the worker's span joins the same trace.
    return this.telemetry.enqueue(settings.name, event, (traceparent) =>
      withTimeout(
        (async (): Promise<PaymentEventEnqueueOutcome> => {
          // The id check labels the answer; BullMQ's job id dedupes even when two deliveries race past it.
          if ((await queue.getJobState(event.id)) !== 'unknown') return 'duplicate';
          const data: PaymentEventJobData = { event, receivedAt: receivedAt.toISOString(), ...(traceparent ? { traceparent } : {}) };
          await queue.add(event.event, data, { jobId: event.id });
          return 'enqueued';
        })(),
        settings.enqueueTimeoutMs,
        `Redis did not accept event ${event.id} within ${settings.enqueueTimeoutMs} ms`,
      ),
    );
  }

  /**
   * For health checks: one round trip to Redis on the producer's connection (it reads the size of the
   * failed set) and whether this instance's worker runs. Rejects when Redis does not answer; bound it
   * with a timeout (the health indicator does).
   */
  async ping(): Promise<{ failed: number; worker: 'running' | 'stopped' | 'off' }> {
    const { queue, settings } = this.ready();
    const failed = await queue.getFailedCount();
    const worker = !settings.worker ? 'off' : this.worker?.isRunning() ? 'running' : 'stopped';
    return { failed, worker };
  }

  /**
   * Events whose handlers failed on every attempt, newest first. `start` / `end` are indexes into the
   * failed set (inclusive, as BullMQ's `getFailed`); default the first 100.
   */
  async failed(start = 0, end = 99): Promise<FailedPaymentEvent[]> {
    const { queue } = this.ready();
    const jobs = await queue.getFailed(start, end);
    return jobs.filter((job): job is Job<PaymentEventJobData> => job !== undefined && job !== null).map(toFailedEvent);
  }

  /** How many events are in the failed set. */
  async failedCount(): Promise<number> {
    return this.ready().queue.getFailedCount();
  }

  /**
   * Moves the failed job of `eventId` back to the queue with a fresh set of attempts. Handlers that
   * completed it before are skipped (the store remembers them); the others run again. Resolves to
   * false when no failed job has that id.
   */
  async replay(eventId: string): Promise<boolean> {
    const { queue } = this.ready();
    const job = await queue.getJob(eventId);
    if (!job || (await job.getState()) !== 'failed') return false;
    await job.retry('failed', { resetAttemptsMade: true });
    this.logger.log(`Replayed event ${eventId} (${job.name}) from the failed set`);
    return true;
  }

  /** Stops taking jobs and lets the running ones finish, before the HTTP server closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.starting?.catch(() => undefined);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.close();
  }

  /** Closes the producer (no delivery can arrive any more) and the clients the module created. */
  async onApplicationShutdown(): Promise<void> {
    await this.beforeApplicationShutdown();
    this.stopObservingFailedJobs();
    this.stopObservingFailedJobs = () => undefined;
    const queue = this.queue;
    this.queue = undefined;
    if (queue) await queue.close();
    const owned = this.owned;
    this.owned = [];
    await Promise.all(
      // QUIT needs a live connection; one that is down or reconnecting is just stopped.
      owned.map(async (client) => (client.status === 'ready' ? client.quit().catch(() => client.disconnect()) : client.disconnect())),
    );
  }

  private async start(settings: ResolvedQueueOptions): Promise<void> {
    const bullmq = await import('bullmq').catch((error: unknown) => {
      throw new PaymentsConfigurationError(
        'webhooks.processing.queue',
        `needs the optional peer dependency bullmq, which could not be loaded (${error instanceof Error ? error.message : 'unknown error'})`,
        'run `npm install bullmq ioredis`, or use processing: inline',
      );
    });
    if (settings.worker && !this.dispatcher) {
      throw new PaymentsConfigurationError(
        'webhooks.processing.queue.worker',
        'is on, but the webhook receiver (and its dispatcher) is not registered',
        'configure `webhooks`, or pass worker: false to only enqueue',
      );
    }
    if (usesKeyPrefix(settings.connection)) {
      throw new PaymentsConfigurationError(
        'webhooks.processing.queue.connection',
        'uses an ioredis keyPrefix, which BullMQ does not support',
        'pass a client or options without keyPrefix (the queue keeps its keys under bull:<name>:)',
      );
    }
    this.bullmq = bullmq;
    const connections = resolveQueueConnections(settings.connection, settings.worker);
    this.owned = connections.owned;
    this.workerConnection = connections.worker;

    this.queue = new bullmq.Queue<PaymentEventJobData>(settings.name, {
      connection: connections.producer,
      defaultJobOptions: {
        attempts: settings.attempts,
        backoff: settings.backoff,
        // Exhausted jobs stay for an operator to inspect and replay.
        removeOnFail: false,
        // While a completed job exists its id dedupes redeliveries; after that the store still does.
        removeOnComplete: { age: this.retentionSeconds, count: COMPLETED_JOBS_KEPT },
      },
    });
    this.queue.on('error', (error) => this.logger.error(`Queue ${settings.name}: ${error.message}`));
    this.stopObservingFailedJobs = this.telemetry.observeFailedJobs(settings.name, () => this.failedCount());
    if (!settings.worker) this.logger.log(`Queue ${settings.name}: enqueue only (worker: false)`);
  }

  private startWorker(settings: ResolvedQueueOptions): void {
    const bullmq = this.bullmq;
    const dispatcher = this.dispatcher;
    if (!bullmq || !dispatcher || !this.workerConnection) return;
    this.worker = new bullmq.Worker<PaymentEventJobData>(settings.name, (job) => this.run(dispatcher, job), {
      connection: this.workerConnection,
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

  /** The worker's job: dispatch with per-handler claims, and throw unless every handler finished. */
  private async run(dispatcher: PaymentEventsDispatcher, job: Job<PaymentEventJobData>): Promise<{ outcome: DispatchOutcome }> {
    const { event, receivedAt, traceparent } = job.data;
    const attempt = job.attemptsMade + 1;
    return this.telemetry.processJob(job.queueName, event, attempt, traceparent, async () => {
      const result = await dispatcher.dispatch(event, { receivedAt: new Date(receivedAt), deliveryAttempt: attempt });
      if (RETRY_OUTCOMES.has(result.outcome)) throw PaymentEventJobError.of(event, result);
      return { outcome: result.outcome };
    });
  }

  private ready(): { queue: Queue<PaymentEventJobData>; settings: ResolvedQueueOptions } {
    if (!this.settings) {
      throw new PaymentsConfigurationError(
        'webhooks.processing',
        "is 'inline', so there is no queue to inspect",
        'set webhooks.processing to { queue: { connection } } to process events through BullMQ',
      );
    }
    if (!this.queue) {
      throw new PaymentsConfigurationError(
        'webhooks.processing.queue',
        'is not started yet (or already closed)',
        'use PaymentEventsQueue after the application has initialised (app.init() / app.listen())',
      );
    }
    return { queue: this.queue, settings: this.settings };
  }
}

function toFailedEvent(job: Job<PaymentEventJobData>): FailedPaymentEvent {
  return {
    eventId: String(job.id),
    type: job.data?.event?.event ?? job.name,
    failedReason: job.failedReason ?? '',
    attemptsMade: job.attemptsMade,
    failedAt: job.finishedOn ? new Date(job.finishedOn) : undefined,
  };
}

/** Rejects with `message` if `promise` has not settled within `ms` (the timer never keeps the process alive). */
async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
