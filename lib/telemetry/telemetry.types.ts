/** The API module, as `await import('@opentelemetry/api')` gives it (types only: an optional peer). */
export type OtelApi = typeof import('@opentelemetry/api');

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

/** The class name of what was thrown: never its message (it may quote input). */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.name || error.constructor.name || 'Error';
  return typeof error;
}
