/** A BullMQ connection: an ioredis client, or ioredis options. */
export type PaymentsQueueConnection = object;

export interface PaymentsQueueOptions {
  /** ioredis client (shared, not closed by the module) or ioredis options (the module owns that client). */
  connection: PaymentsQueueConnection;
  /** Queue name. Default 'payments-webhooks' (a named instance: 'payments-webhooks-<name>'). */
  name?: string;
  /**
   * BullMQ's key prefix: the queue's keys are `<prefix>:<name>:...`. Default 'bull'. On Redis Cluster
   * (an ioredis `Cluster` connection) it must carry a hash tag, e.g. '{payments}', so that every key
   * of the queue lives in one slot (BullMQ's scripts touch several at once); boot fails otherwise.
   */
  prefix?: string;
  /** Attempts per job, first included. Default 10. */
  attempts?: number;
  /** Backoff between job attempts. Default { type: 'exponential', delay: 1000 }. */
  backoff?: { type: 'exponential' | 'fixed'; delay: number };
  /** Jobs a worker runs at once. Default 1. */
  concurrency?: number;
  /** Whether this instance runs a worker (an app may only enqueue). Default true. */
  worker?: boolean;
  /** Longest wait for Redis to accept a job before the delivery is answered 503, in ms. Default 5000. */
  enqueueTimeoutMs?: number;
  /** Lock of a running job; a worker that dies loses it after this long, in ms. Default 30000. */
  lockDurationMs?: number;
  /** How often workers look for jobs whose worker died (stalled), in ms. Default 30000. */
  stalledIntervalMs?: number;
}

/** The queue options after validation, with every default filled in. */
export type ResolvedPaymentsQueueOptions = Required<Omit<PaymentsQueueOptions, 'connection'>> & {
  connection: PaymentsQueueConnection;
};
