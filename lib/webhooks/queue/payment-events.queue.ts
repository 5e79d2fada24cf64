import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
// Types only: bullmq is an optional peer, loaded with `await import('bullmq')` when queue mode is on.
import type { Job, Queue } from 'bullmq';
import { PaymentsConfigurationError, PaymentsError } from '../../errors/payments.errors.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import { PaymentsTelemetry } from '../../telemetry/payments.telemetry.js';
import type {
  FailedPaymentEvent,
  PaymentEventEnqueueOutcome,
  PaymentEventJobData,
} from './payment-event-job.interface.js';
import type { PaymentEventsWorker } from './payment-events.worker.js';
import { loadBullmq } from './bullmq.loader.js';
import { closeOwnedClients, resolveQueueConnections, type DuplicableRedisClient } from './queue-connection.util.js';
import { PAYMENTS_QUEUE_LOGGER, PAYMENTS_QUEUE_WORKER } from './payments-queue.constants.js';

type ResolvedQueueOptions = Exclude<ResolvedWebhooksOptions['processing'], 'inline'>['queue'];

export { PAYMENTS_QUEUE_LOGGER } from './payments-queue.constants.js';

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
 * This is the producer side of the queue part (registered only in queued mode): it opens on module
 * init so deliveries can be enqueued once the app listens. Each job's id is the event id, so the queue
 * itself refuses a second job for an event it still holds. The handlers run in `PaymentEventsWorker`
 * (unless `worker: false`), which starts on bootstrap and stops before shutdown. Exhausted jobs stay
 * in the failed set. Completed jobs are kept for `retentionSeconds` (at most 100000 of them).
 *
 * Only when `forRootAsync` leaves the processing mode to its factory (no static `receiver: { processing }`, deprecated)
 * and the factory chose inline does it exist without a queue: its methods then reject with a
 * `PaymentsConfigurationError`.
 */
@Injectable()
export class PaymentEventsQueue implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PAYMENTS_QUEUE_LOGGER);
  private readonly settings: ResolvedQueueOptions | undefined;
  private readonly retentionSeconds: number;
  private queue: Queue<PaymentEventJobData> | undefined;
  private owned: DuplicableRedisClient[] = [];
  private starting: Promise<void> | undefined;
  private stopObservingFailedJobs: () => void = () => undefined;

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions,
    @Optional() @Inject(PAYMENTS_QUEUE_WORKER) private readonly worker?: Pick<PaymentEventsWorker, 'status'>,
    @Optional() @Inject(PaymentsTelemetry) private readonly telemetry: PaymentsTelemetry = PaymentsTelemetry.disabled(),
  ) {
    this.settings = webhooks.processing !== 'inline' ? webhooks.processing.queue : undefined;
    this.retentionSeconds = webhooks.retentionSeconds;
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
   * Adds `event` as a job whose id is the event id, and resolves once Redis has accepted it.
   * `'duplicate'` when a job for this event is already queued, running, completed (within its
   * retention) or failed. Rejects when Redis does not accept it within `enqueueTimeoutMs`.
   */
  async enqueue(input: PaymentEvent, receivedAt: Date): Promise<PaymentEventEnqueueOutcome> {
    const { queue, settings } = this.ready();
    // The job id is the canonical (lower-case) event id, whoever calls: a case variant is the same event.
    const canonicalId = input.id.toLowerCase();
    const event = canonicalId === input.id ? input : { ...input, id: canonicalId };
    // A producer span; its traceparent travels in the job so the worker's span joins the same trace.
    return this.telemetry.enqueue(settings.name, event, (traceparent) =>
      withTimeout(
        (async (): Promise<PaymentEventEnqueueOutcome> => {
          // The id check labels the answer; BullMQ's job id dedupes even when two deliveries race past it.
          if ((await queue.getJobState(event.id)) !== 'unknown') return 'duplicate';
          const data: PaymentEventJobData = {
            event,
            receivedAt: receivedAt.toISOString(),
            ...(traceparent ? { traceparent } : {}),
          };
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
    const worker = !settings.worker ? 'off' : (this.worker?.status ?? 'stopped');
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

  /** Closes the producer (no delivery can arrive any more; the worker stopped before) and the clients the module created. */
  async onApplicationShutdown(): Promise<void> {
    await this.starting?.catch(() => undefined);
    this.stopObservingFailedJobs();
    this.stopObservingFailedJobs = () => undefined;
    const queue = this.queue;
    this.queue = undefined;
    if (queue) await queue.close();
    const owned = this.owned;
    this.owned = [];
    await closeOwnedClients(owned);
  }

  private async start(settings: ResolvedQueueOptions): Promise<void> {
    const bullmq = await loadBullmq(settings);
    const connections = resolveQueueConnections(settings.connection, false);
    this.owned = connections.owned;

    this.queue = new bullmq.Queue<PaymentEventJobData>(settings.name, {
      connection: connections.producer,
      prefix: settings.prefix,
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
    timer = setTimeout(() => reject(new PaymentsError(message)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
