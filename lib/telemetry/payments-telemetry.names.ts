/**
 * Names of everything the package reports through OpenTelemetry: the instrumentation scope, span
 * names, attribute keys and metric names. One place, so that docs/observability.md, dashboards and
 * tests read the same strings.
 */

/** Instrumentation scope (tracer and meter name). */
export const PAYMENTS_TELEMETRY_SCOPE = 'nestjs-payments';

/** Span names. The client call span is named `{method} {url.template}` (HTTP semantic conventions). */
export const PaymentsSpanNames = Object.freeze({
  /** One incoming webhook delivery, from the delivery checks to the answer. */
  delivery: 'payments.webhook.delivery',
  /** One handler of one event: claim, run, complete or release. */
  handler: 'payments.handler',
  /** Prefixes of the queue hop spans: `send {queue}` (producer) and `process {queue}` (consumer). */
  queueSend: 'send',
  queueProcess: 'process',
  /** One sweep of the reconciler (`webhooks.reconcile`) that held the sweeper lease. */
  reconcileSweep: 'payments.reconcile.sweep',
});

/** Attribute keys. HTTP and messaging keys follow the OpenTelemetry semantic conventions. */
export const PaymentsAttributes = Object.freeze({
  /** The module instance's name (`forRoot({ name })`); absent for the unnamed instance. */
  instance: 'payments.instance',
  eventId: 'payments.event.id',
  eventType: 'payments.event.type',
  verification: 'payments.webhook.verification',
  outcome: 'payments.webhook.outcome',
  rejectionReason: 'payments.webhook.rejection_reason',
  handlerId: 'payments.handler.id',
  handlerAttempt: 'payments.handler.attempt',
  handlerResult: 'payments.handler.result',
  handlerDurationMs: 'payments.handler.duration_ms',
  storeOperation: 'payments.store.operation',
  queueOutcome: 'payments.queue.outcome',
  queueAttempt: 'payments.queue.attempt',
  clientAttempts: 'payments.client.attempts',
  clientRetryWaitMs: 'payments.client.retry_wait_ms',
  clientRetryReason: 'payments.client.retry_reason',
  httpRequestMethod: 'http.request.method',
  httpResponseStatusCode: 'http.response.status_code',
  httpRequestResendCount: 'http.request.resend_count',
  urlTemplate: 'url.template',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
  messagingSystem: 'messaging.system',
  messagingDestination: 'messaging.destination.name',
  messagingOperationType: 'messaging.operation.type',
  messagingOperationName: 'messaging.operation.name',
  messagingMessageId: 'messaging.message.id',
  /** What the reconciler did with an intent: reconciled, settled, pending, gave_up, gone. */
  reconcileResult: 'payments.reconcile.result',
  reconcileChecked: 'payments.reconcile.checked',
  reconcileReconciled: 'payments.reconcile.reconciled',
  reconcilePending: 'payments.reconcile.pending',
  reconcileGaveUp: 'payments.reconcile.gave_up',
  /** Why a sweep ended early: rate_limited, unauthorized, unavailable, store_unavailable. */
  reconcileStopped: 'payments.reconcile.stopped',
});

/** Metric names (units in docs/observability.md and in each instrument's `unit`). */
export const PaymentsMetricNames = Object.freeze({
  deliveries: 'payments.webhook.deliveries',
  rejections: 'payments.webhook.rejections',
  handlerDuration: 'payments.handler.duration',
  storeErrors: 'payments.store.errors',
  leasesLost: 'payments.handler.leases_lost',
  queueFailedJobs: 'payments.queue.failed_jobs',
  clientRequests: 'payments.client.requests',
  clientRetries: 'payments.client.retries',
  httpClientRequestDuration: 'http.client.request.duration',
  reconcileIntents: 'payments.reconcile.intents',
});

/** Name of the span event added to a client call span before each retry wait. */
export const PAYMENTS_CLIENT_RETRY_EVENT = 'payments.client.retry';
