// @opentelemetry/api is an optional peer, loaded once at boot with `await import(...)`; the parts import its types only.
import { forInstance } from './payments-telemetry.instance.js';
import { createInstruments, type Instruments } from './payments-telemetry.instruments.js';
import { PaymentsAttributes as A } from './payments-telemetry.names.js';
import { startClientCallTelemetry } from './client-call.telemetry.js';
import { NOOP_DELIVERY, startDeliveryTelemetry } from './delivery.telemetry.js';
import { runHandlerSpan } from './handler.telemetry.js';
import { sweepInSpan, type TelemetrySweep } from './reconcile.telemetry.js';
import { enqueueInSpan, observeFailedJobs, processJobInSpan } from './queue-job.telemetry.js';
import type {
  OtelApi,
  PaymentsClientCallTelemetry,
  PaymentsDeliveryTelemetry,
  TelemetryEventRef,
  TelemetryHandlerResult,
  TelemetryStoreOperation,
} from './telemetry.types.js';

export type {
  PaymentsClientCallTelemetry,
  PaymentsDeliveryTelemetry,
  TelemetryClientAttempt,
  TelemetryEventRef,
  TelemetryHandlerResult,
  TelemetryStoreOperation,
} from './telemetry.types.js';
export type { Instruments } from './payments-telemetry.instruments.js';
export { NOOP_DELIVERY } from './delivery.telemetry.js';
export { routeTemplate } from './client-call.telemetry.js';

/**
 * Spans and metrics of the payments module through `@opentelemetry/api` (an optional peer; the
 * package ships no SDK). The module loads the API once at boot; when it is not installed every method
 * is a no-op, and when it is installed but the app registered no SDK (no tracer provider and no meter
 * provider when the module boots), the delivery path takes the same no-op path: no span is started.
 * Register the app's SDK (tracer and meter providers, a context manager) before the Nest app is
 * created, as the OpenTelemetry Node guide says: one registered later is not seen by deliveries.
 *
 * What it records is listed in docs/observability.md. No attribute ever holds a body, a header value,
 * a key or a secret: only event ids and types, handler ids, route templates, statuses, reason codes and
 * error class names.
 *
 * Injected by the receiver and the client; an app rarely uses it directly.
 */
export class PaymentsTelemetry {
  readonly #api: OtelApi | undefined;
  readonly #i: Instruments | undefined;
  /** Instruments only when an SDK (tracer or meter provider) was registered at boot: the hot path's test. */
  readonly #recording: Instruments | undefined;

  private constructor(api: OtelApi | undefined, instance?: string) {
    this.#api = api;
    const instruments = api ? createInstruments(api) : undefined;
    // A named instance: every span and measurement carries payments.instance; the unnamed instance's carry none.
    this.#i = instruments && instance !== undefined ? forInstance(instruments, instance) : instruments;
    this.#recording = this.#i && (this.#i.tracing || this.#i.metrics) ? this.#i : undefined;
  }

  /**
   * Loads `@opentelemetry/api` if the app has it; otherwise a telemetry that records nothing. With
   * `instance` (a named module instance), its spans and metrics carry `payments.instance`.
   */
  static async load(instance?: string): Promise<PaymentsTelemetry> {
    try {
      return new PaymentsTelemetry(await import('@opentelemetry/api'), instance);
    } catch {
      return PaymentsTelemetry.disabled();
    }
  }

  /** A telemetry that records nothing (the API is not installed, or a test does not want it). */
  static disabled(): PaymentsTelemetry {
    return new PaymentsTelemetry(undefined);
  }

  /**
   * Whether an SDK (a tracer or a meter provider) was registered when the module booted. When not, the
   * delivery path records nothing and skips its telemetry wrappers altogether.
   */
  get recording(): boolean {
    return this.#recording !== undefined;
  }

  /** Whether `@opentelemetry/api` was found (an SDK may still be missing: then the API records nothing). */
  get enabled(): boolean {
    return this.#api !== undefined;
  }

  /** Starts the span of an incoming delivery as a child of the active context (the HTTP server span). */
  startDelivery(): PaymentsDeliveryTelemetry {
    const api = this.#api;
    const i = this.#recording;
    if (!api || !i) return NOOP_DELIVERY;
    return startDeliveryTelemetry(api, i);
  }

  /**
   * Runs one handler of one event (claim, run, complete or release) inside a `payments.handler` span,
   * and records `payments.handler.duration` when the handler ran.
   */
  runHandler<R extends TelemetryHandlerResult>(
    handlerId: string,
    event: TelemetryEventRef,
    fn: () => Promise<R>,
  ): Promise<R> {
    // No SDK: a plain call, no async frame of its own.
    if (!this.#recording) return fn();
    return runHandlerSpan(this.#api!, this.#recording, handlerId, event, fn);
  }

  /** Counts a failed idempotency store call (`payments.store.errors`). */
  storeError(operation: TelemetryStoreOperation): void {
    if (this.#i?.metrics) this.#i.storeErrors.add(1, { [A.storeOperation]: operation });
  }

  /** Counts a running handler whose claim was lost before it ended (`payments.handler.leases_lost`). */
  leaseLost(handlerId: string): void {
    if (this.#i?.metrics) this.#i.leasesLost.add(1, { [A.handlerId]: handlerId });
  }

  /**
   * Wraps the enqueue of `event` in a producer span `send {queue}`; `fn` receives the W3C
   * `traceparent` of that span (undefined when not sampled), to store in the job.
   */
  enqueue<R extends string>(
    queueName: string,
    event: TelemetryEventRef,
    fn: (traceparent: string | undefined) => Promise<R>,
  ): Promise<R> {
    return enqueueInSpan(this.#api, this.#i, queueName, event, fn);
  }

  /**
   * Wraps a worker's run of a queued event in a consumer span `process {queue}`: a child of the
   * enqueue span whose `traceparent` the job carries, and linked to it.
   */
  processJob<R extends { outcome: string }>(
    queueName: string,
    event: TelemetryEventRef,
    attempt: number,
    traceparent: string | undefined,
    fn: () => Promise<R>,
  ): Promise<R> {
    return processJobInSpan(this.#api, this.#i, queueName, event, attempt, traceparent, fn);
  }

  /**
   * Reports `count()` as `payments.queue.failed_jobs` of `queueName` at each metric collection.
   * Returns the function that stops it (on shutdown). A count that fails is left out of that collection.
   */
  observeFailedJobs(queueName: string, count: () => Promise<number>): () => void {
    return observeFailedJobs(this.#i, queueName, count);
  }

  /** Runs one reconciliation sweep in a `payments.reconcile.sweep` span, and counts its intents by result. */
  reconcileSweep<R extends TelemetrySweep>(fn: () => Promise<R>): Promise<R> {
    return sweepInSpan(this.#api, this.#i, fn);
  }

  /**
   * Starts the span of one logical client call `{method} {url.template}` (kind CLIENT, HTTP client
   * semantic conventions) as a child of the active context.
   */
  startClientCall(
    method: string,
    path: string,
    server: { address: string; port: number },
  ): PaymentsClientCallTelemetry {
    return startClientCallTelemetry(this.#api, this.#recording, method, path, server);
  }
}
