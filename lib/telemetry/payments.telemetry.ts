// Types only: @opentelemetry/api is an optional peer, loaded once at boot with `await import(...)`.
import type {
  Attributes,
  Context,
  Counter,
  Histogram,
  ObservableGauge,
  ObservableResult,
  Span,
  SpanContext,
  Tracer,
} from '@opentelemetry/api';
import {
  PAYMENTS_CLIENT_RETRY_EVENT,
  PAYMENTS_TELEMETRY_SCOPE,
  PaymentsAttributes as A,
  PaymentsMetricNames,
  PaymentsSpanNames,
} from './payments-telemetry.names.js';
import { forInstance } from './payments-telemetry.instance.js';

type OtelApi = typeof import('@opentelemetry/api');

/** The event facts a span may carry: its id and type (never its data or metadata). */
export interface TelemetryEventRef {
  id: string;
  event: string;
}

/** What a handler run reports back, as far as telemetry reads it (a `DispatchHandlerResult`). */
export interface TelemetryHandlerResult {
  status: string;
  attempt?: number;
  durationMs?: number;
  error?: unknown;
}

/** One try of a client call: an HTTP answer or none (a system error code). */
export type TelemetryClientAttempt = { kind: 'answer'; status: number } | { kind: 'no-answer'; code: string };

/** The idempotency store operation that failed, for `payments.store.errors`. */
export type TelemetryStoreOperation = 'claim' | 'complete' | 'release' | 'renew' | 'ping';

/** Telemetry of one incoming delivery: its span (a child of the active context) and its metrics. */
export interface PaymentsDeliveryTelemetry {
  /** The signature and shape checks passed: the span gets the event id and type. */
  verified(event: TelemetryEventRef): void;
  /** Runs `fn` with the delivery span active, so handler, queue and client spans are its children. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** The delivery was answered `status` with `outcome` (handled, duplicate, enqueued, ...). Once only. */
  end(outcome: string, status: number): void;
  /** The delivery was refused with `status` for `reason` (a rejection code, never input). Once only. */
  rejected(status: number, reason: string): void;
}

/** Telemetry of one logical client call (all its attempts and retry waits). */
export interface PaymentsClientCallTelemetry {
  /** Runs one try with the call span active and records `http.client.request.duration`. */
  attempt<T extends TelemetryClientAttempt>(fn: () => Promise<T>): Promise<T>;
  /** A retry is about to wait `waitMs` because of `reason` (a status code or a system error code). */
  retry(waitMs: number, reason: string): void;
  /** The call ended with an HTTP `status`, or with no answer (`code`). Once only. */
  end(result: { status: number } | { code: string }): void;
}

/** The delivery telemetry that records nothing (no SDK): one shared object, never attached to a request. */
export const NOOP_DELIVERY: PaymentsDeliveryTelemetry = Object.freeze({
  verified: () => undefined,
  run: <T>(fn: () => Promise<T>) => fn(),
  end: () => undefined,
  rejected: () => undefined,
});

const NOOP_CLIENT_CALL: PaymentsClientCallTelemetry = Object.freeze({
  attempt: <T extends TelemetryClientAttempt>(fn: () => Promise<T>) => fn(),
  retry: () => undefined,
  end: () => undefined,
});

/** Bucket boundaries (seconds) of the duration histograms: the HTTP semantic conventions' advice. */
const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

const UUID_SEGMENT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The low-cardinality route template of a client path, for `url.template` and the span name: UUID
 * and numeric segments become `{id}`, the query is dropped.
 *
 * @example routeTemplate('/payment_intents/0b1d...e4') // '/payment_intents/{id}'
 */
export function routeTemplate(path: string): string {
  const bare = path.split('?', 1)[0]!;
  return bare
    .split('/')
    .map((segment) => (UUID_SEGMENT.test(segment) || /^\d+$/.test(segment) ? '{id}' : segment))
    .join('/');
}

export interface Instruments {
  tracer: Tracer;
  /**
   * False when no tracer provider was registered at boot (the global one is the API's proxy with no
   * delegate): spans would be the API's non-recording ones, so none is started.
   */
  tracing: boolean;
  /** False when no meter provider was registered at boot: the instruments are the API's no-ops, so no attributes are built. */
  metrics: boolean;
  deliveries: Counter;
  rejections: Counter;
  handlerDuration: Histogram;
  storeErrors: Counter;
  leasesLost: Counter;
  failedJobs: ObservableGauge;
  clientRequests: Counter;
  clientRetries: Counter;
  clientDuration: Histogram;
}

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
    // A named instance: every span and measurement carries payments.instance (the unnamed one: as before).
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
    const parent = api.context.active();
    const span = i.tracer.startSpan(PaymentsSpanNames.delivery, { kind: api.SpanKind.INTERNAL }, parent);
    // No SDK (or not sampled) and no meter: nothing to record, nothing to allocate per delivery.
    if (!span.isRecording() && !i.metrics) return NOOP_DELIVERY;
    return new DeliveryTelemetry(api, i, span, parent);
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
    return this.#runHandlerSpan(this.#api!, this.#recording, handlerId, event, fn);
  }

  async #runHandlerSpan<R extends TelemetryHandlerResult>(
    api: OtelApi,
    i: Instruments,
    handlerId: string,
    event: TelemetryEventRef,
    fn: () => Promise<R>,
  ): Promise<R> {
    const parent = api.context.active();
    const span = i.tracer.startSpan(PaymentsSpanNames.handler, { kind: api.SpanKind.INTERNAL }, parent);
    const recording = span.isRecording();
    if (recording) span.setAttributes({ [A.handlerId]: handlerId, [A.eventId]: event.id, [A.eventType]: event.event });
    let result: R;
    try {
      // A span that records nothing need not be made active: its children would record nothing either.
      result = recording ? await api.context.with(api.trace.setSpan(parent, span), fn) : await fn();
    } catch (error) {
      span.setAttribute(A.errorType, errorType(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorType(error) });
      span.end();
      throw error;
    }
    if (i.metrics && result.durationMs !== undefined) {
      i.handlerDuration.record(result.durationMs / 1000, {
        [A.handlerId]: handlerId,
        [A.handlerResult]: result.status,
      });
    }
    if (recording) {
      span.setAttribute(A.handlerResult, result.status);
      if (result.attempt !== undefined) span.setAttribute(A.handlerAttempt, result.attempt);
      if (result.durationMs !== undefined) span.setAttribute(A.handlerDurationMs, result.durationMs);
      if (result.status === 'failed' || result.status === 'store_unavailable') {
        const type = result.error === undefined ? result.status : errorType(result.error);
        span.setAttribute(A.errorType, type);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: type });
      }
    }
    span.end();
    return result;
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
  async enqueue<R extends string>(
    queueName: string,
    event: TelemetryEventRef,
    fn: (traceparent: string | undefined) => Promise<R>,
  ): Promise<R> {
    const api = this.#api;
    const i = this.#i;
    if (!api || !i) return fn(undefined);
    const parent = api.context.active();
    const span = i.tracer.startSpan(
      `${PaymentsSpanNames.queueSend} ${queueName}`,
      {
        kind: api.SpanKind.PRODUCER,
        attributes: { ...messagingAttributes(queueName, 'send', 'add', event.id), [A.eventType]: event.event },
      },
      parent,
    );
    try {
      const outcome = await api.context.with(api.trace.setSpan(parent, span), () =>
        fn(toTraceparent(span.spanContext(), api)),
      );
      span.setAttribute(A.queueOutcome, outcome);
      return outcome;
    } catch (error) {
      span.setAttribute(A.errorType, errorType(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorType(error) });
      throw error;
    } finally {
      span.end();
    }
  }

  /**
   * Wraps a worker's run of a queued event in a consumer span `process {queue}`: a child of the
   * enqueue span whose `traceparent` the job carries, and linked to it.
   */
  async processJob<R extends { outcome: string }>(
    queueName: string,
    event: TelemetryEventRef,
    attempt: number,
    traceparent: string | undefined,
    fn: () => Promise<R>,
  ): Promise<R> {
    const api = this.#api;
    const i = this.#i;
    if (!api || !i) return fn();
    const producer = fromTraceparent(traceparent, api);
    const parent = producer ? api.trace.setSpanContext(api.ROOT_CONTEXT, producer) : api.context.active();
    const span = i.tracer.startSpan(
      `${PaymentsSpanNames.queueProcess} ${queueName}`,
      {
        kind: api.SpanKind.CONSUMER,
        attributes: {
          ...messagingAttributes(queueName, 'process', 'process', event.id),
          [A.eventType]: event.event,
          [A.queueAttempt]: attempt,
        },
        links: producer ? [{ context: producer }] : [],
      },
      parent,
    );
    try {
      const result = await api.context.with(api.trace.setSpan(parent, span), fn);
      span.setAttribute(A.outcome, result.outcome);
      return result;
    } catch (error) {
      const type =
        error instanceof Error && 'outcome' in error && typeof error.outcome === 'string'
          ? error.outcome
          : errorType(error);
      span.setAttribute(A.errorType, type);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: type });
      throw error;
    } finally {
      span.end();
    }
  }

  /**
   * Reports `count()` as `payments.queue.failed_jobs` of `queueName` at each metric collection.
   * Returns the function that stops it (on shutdown). A count that fails is left out of that collection.
   */
  observeFailedJobs(queueName: string, count: () => Promise<number>): () => void {
    const i = this.#i;
    if (!i) return () => undefined;
    const callback = async (result: ObservableResult): Promise<void> => {
      try {
        result.observe(await count(), { [A.messagingDestination]: queueName });
      } catch {
        // Redis down: no value this time (a gap, not a false zero); the health indicator says why.
      }
    };
    i.failedJobs.addCallback(callback);
    return () => i.failedJobs.removeCallback(callback);
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
    const api = this.#api;
    const i = this.#recording;
    if (!api || !i) return NOOP_CLIENT_CALL;
    const parent = api.context.active();
    const template = routeTemplate(path);
    const base: Attributes = {
      [A.httpRequestMethod]: method,
      [A.urlTemplate]: template,
      [A.serverAddress]: server.address,
      [A.serverPort]: server.port,
    };
    const span = i.tracer.startSpan(`${method} ${template}`, { kind: api.SpanKind.CLIENT, attributes: base }, parent);
    if (!span.isRecording() && !i.metrics) return NOOP_CLIENT_CALL;
    return new ClientCallTelemetry(api, i, span, api.trace.setSpan(parent, span), base);
  }
}

class DeliveryTelemetry implements PaymentsDeliveryTelemetry {
  #ended = false;
  #verified = false;

  constructor(
    private readonly api: OtelApi,
    private readonly i: Instruments,
    private readonly span: Span,
    private readonly parent: Context,
  ) {}

  verified(event: TelemetryEventRef): void {
    this.#verified = true;
    if (!this.span.isRecording()) return;
    this.span.setAttributes({ [A.verification]: 'valid', [A.eventId]: event.id, [A.eventType]: event.event });
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.span.isRecording()) return fn();
    return this.api.context.with(this.api.trace.setSpan(this.parent, this.span), fn);
  }

  end(outcome: string, status: number): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.i.metrics) this.i.deliveries.add(1, { [A.outcome]: outcome, [A.httpResponseStatusCode]: status });
    this.finish(outcome, status);
  }

  rejected(status: number, reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.i.metrics) {
      this.i.deliveries.add(1, { [A.outcome]: 'rejected', [A.httpResponseStatusCode]: status });
      this.i.rejections.add(1, { [A.rejectionReason]: reason, [A.httpResponseStatusCode]: status });
    }
    if (this.span.isRecording()) {
      this.span.setAttribute(A.rejectionReason, reason);
      if (!this.#verified) this.span.setAttribute(A.verification, reason);
    }
    this.finish('rejected', status, reason);
  }

  private finish(outcome: string, status: number, reason?: string): void {
    if (this.span.isRecording()) {
      this.span.setAttributes({ [A.outcome]: outcome, [A.httpResponseStatusCode]: status });
      if (status >= 500) {
        // A 5xx makes the service retry: an error for whoever watches the receiver.
        const type = reason ?? outcome;
        this.span.setAttribute(A.errorType, type);
        this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: type });
      }
    }
    this.span.end();
  }
}

class ClientCallTelemetry implements PaymentsClientCallTelemetry {
  #attempts = 0;
  #waitMs = 0;
  #ended = false;

  constructor(
    private readonly api: OtelApi,
    private readonly i: Instruments,
    private readonly span: Span,
    private readonly active: Context,
    private readonly base: Attributes,
  ) {}

  async attempt<T extends TelemetryClientAttempt>(fn: () => Promise<T>): Promise<T> {
    this.#attempts += 1;
    const started = performance.now();
    let outcome: T;
    try {
      outcome = await this.api.context.with(this.active, fn);
    } catch (error) {
      if (this.i.metrics)
        this.i.clientDuration.record((performance.now() - started) / 1000, {
          ...this.base,
          [A.errorType]: errorType(error),
        });
      throw error;
    }
    if (!this.i.metrics) return outcome;
    const seconds = (performance.now() - started) / 1000;
    if (outcome.kind === 'answer') {
      const attributes: Attributes = { ...this.base, [A.httpResponseStatusCode]: outcome.status };
      if (outcome.status >= 400) attributes[A.errorType] = String(outcome.status);
      this.i.clientDuration.record(seconds, attributes);
    } else {
      this.i.clientDuration.record(seconds, { ...this.base, [A.errorType]: outcome.code });
    }
    return outcome;
  }

  retry(waitMs: number, reason: string): void {
    const wait = Math.round(waitMs);
    this.#waitMs += wait;
    if (this.i.metrics)
      this.i.clientRetries.add(1, {
        [A.httpRequestMethod]: this.base[A.httpRequestMethod],
        [A.urlTemplate]: this.base[A.urlTemplate],
        [A.clientRetryReason]: reason,
      });
    if (this.span.isRecording()) {
      this.span.addEvent(PAYMENTS_CLIENT_RETRY_EVENT, {
        [A.clientRetryReason]: reason,
        [A.clientRetryWaitMs]: wait,
        [A.clientAttempts]: this.#attempts,
      });
    }
  }

  end(result: { status: number } | { code: string }): void {
    if (this.#ended) return;
    this.#ended = true;
    const attributes: Attributes = {
      [A.httpRequestMethod]: this.base[A.httpRequestMethod],
      [A.urlTemplate]: this.base[A.urlTemplate],
    };
    let error: string | undefined;
    if ('status' in result) {
      attributes[A.httpResponseStatusCode] = result.status;
      if (result.status >= 400) error = String(result.status);
    } else {
      error = result.code;
    }
    if (error !== undefined) attributes[A.errorType] = error;
    if (this.i.metrics) this.i.clientRequests.add(1, attributes);
    if (this.span.isRecording()) {
      this.span.setAttributes({
        ...attributes,
        [A.clientAttempts]: this.#attempts,
        [A.httpRequestResendCount]: Math.max(0, this.#attempts - 1),
        [A.clientRetryWaitMs]: this.#waitMs,
      });
      if (error !== undefined) this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: error });
    }
    this.span.end();
  }
}

function createInstruments(api: OtelApi): Instruments {
  const meter = api.metrics.getMeter(PAYMENTS_TELEMETRY_SCOPE);
  const durationAdvice = { advice: { explicitBucketBoundaries: DURATION_BUCKETS_S } };
  return {
    tracer: api.trace.getTracer(PAYMENTS_TELEMETRY_SCOPE),
    tracing: hasTracerProvider(api),
    metrics: meter !== api.createNoopMeter(),
    deliveries: meter.createCounter(PaymentsMetricNames.deliveries, {
      unit: '{delivery}',
      description: 'Webhook deliveries answered, by outcome and HTTP status.',
    }),
    rejections: meter.createCounter(PaymentsMetricNames.rejections, {
      unit: '{delivery}',
      description: 'Webhook deliveries refused by the receiver, by reason.',
    }),
    handlerDuration: meter.createHistogram(PaymentsMetricNames.handlerDuration, {
      unit: 's',
      description: 'Run time of @OnPaymentEvent handlers, by handler and result.',
      ...durationAdvice,
    }),
    storeErrors: meter.createCounter(PaymentsMetricNames.storeErrors, {
      unit: '{error}',
      description: 'Idempotency store calls that failed, by operation.',
    }),
    leasesLost: meter.createCounter(PaymentsMetricNames.leasesLost, {
      unit: '{lease}',
      description: 'Handlers whose claim was lost while they ran (another delivery may run them too).',
    }),
    failedJobs: meter.createObservableGauge(PaymentsMetricNames.queueFailedJobs, {
      unit: '{job}',
      description: 'Queued events whose handlers failed on every attempt (the failed set).',
    }),
    clientRequests: meter.createCounter(PaymentsMetricNames.clientRequests, {
      unit: '{request}',
      description: 'Logical API client calls (retries included), by final status or error type.',
    }),
    clientRetries: meter.createCounter(PaymentsMetricNames.clientRetries, {
      unit: '{retry}',
      description: 'API client retries, by reason (status code or system error code).',
    }),
    clientDuration: meter.createHistogram(PaymentsMetricNames.httpClientRequestDuration, {
      unit: 's',
      description: 'Duration of each HTTP request the API client sent (one per attempt).',
      ...durationAdvice,
    }),
  };
}

/**
 * Whether a tracer provider is registered: the global one is not the API's proxy, or the proxy has a
 * delegate (an SDK's provider). Duck-typed, so a second copy of the API is read the same way.
 */
function hasTracerProvider(api: OtelApi): boolean {
  const provider = api.trace.getTracerProvider() as Partial<
    Pick<InstanceType<OtelApi['ProxyTracerProvider']>, 'getDelegateTracer'>
  >;
  if (typeof provider.getDelegateTracer !== 'function') return true;
  return provider.getDelegateTracer(PAYMENTS_TELEMETRY_SCOPE) !== undefined;
}

function messagingAttributes(queueName: string, type: string, name: string, messageId: string): Attributes {
  return {
    [A.messagingSystem]: 'bullmq',
    [A.messagingDestination]: queueName,
    [A.messagingOperationType]: type,
    [A.messagingOperationName]: name,
    [A.messagingMessageId]: messageId,
  };
}

/** The class name of what was thrown: never its message (it may quote input). */
function errorType(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || 'Error';
  return typeof error;
}

function toTraceparent(context: SpanContext, api: OtelApi): string | undefined {
  if (!api.isSpanContextValid(context)) return undefined;
  const sampled = (context.traceFlags & api.TraceFlags.SAMPLED) === api.TraceFlags.SAMPLED;
  return `00-${context.traceId}-${context.spanId}-${sampled ? '01' : '00'}`;
}

function fromTraceparent(value: unknown, api: OtelApi): SpanContext | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const context: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  };
  return api.isSpanContextValid(context) ? context : undefined;
}
