// Types only: @opentelemetry/api is an optional peer, loaded once at boot with `await import(...)`.
import type { Counter, Histogram, ObservableGauge, Tracer } from '@opentelemetry/api';
import { PAYMENTS_TELEMETRY_SCOPE, PaymentsMetricNames } from './payments-telemetry.names.js';
import type { OtelApi } from './telemetry.types.js';

/** Bucket boundaries (seconds) of the duration histograms: the HTTP semantic conventions' advice. */
const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

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
  reconcileIntents: Counter;
}

/** The tracer and the instruments of the module, made once at boot. */
export function createInstruments(api: OtelApi): Instruments {
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
    reconcileIntents: meter.createCounter(PaymentsMetricNames.reconcileIntents, {
      unit: '{intent}',
      description: 'Intents the reconciler checked, by result (reconciled, settled, pending, gave_up, gone).',
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
