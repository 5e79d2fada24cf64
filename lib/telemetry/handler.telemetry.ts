// Types only: @opentelemetry/api is an optional peer, loaded once at boot with `await import(...)`.
import type { Instruments } from './payments-telemetry.instruments.js';
import { PaymentsAttributes as A, PaymentsSpanNames } from './payments-telemetry.names.js';
import { errorType, type OtelApi, type TelemetryEventRef, type TelemetryHandlerResult } from './telemetry.types.js';

/**
 * One handler of one event (claim, run, complete or release) inside a `payments.handler` span; records
 * `payments.handler.duration` when the handler ran.
 */
export async function runHandlerSpan<R extends TelemetryHandlerResult>(
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
