// Types only: @opentelemetry/api is an optional peer, loaded once at boot with `await import(...)`.
import type { Context, Span } from '@opentelemetry/api';
import type { Instruments } from './payments-telemetry.instruments.js';
import { PaymentsAttributes as A, PaymentsSpanNames } from './payments-telemetry.names.js';
import type { OtelApi, PaymentsDeliveryTelemetry, TelemetryEventRef } from './telemetry.types.js';

/** The delivery telemetry that records nothing (no SDK): one shared object, never attached to a request. */
export const NOOP_DELIVERY: PaymentsDeliveryTelemetry = Object.freeze({
  verified: () => undefined,
  run: <T>(fn: () => Promise<T>) => fn(),
  end: () => undefined,
  rejected: () => undefined,
});

/** The span of an incoming delivery, a child of the active context (the HTTP server span), once an SDK records. */
export function startDeliveryTelemetry(api: OtelApi, i: Instruments): PaymentsDeliveryTelemetry {
  const parent = api.context.active();
  const span = i.tracer.startSpan(PaymentsSpanNames.delivery, { kind: api.SpanKind.INTERNAL }, parent);
  // No SDK (or not sampled) and no meter: nothing to record, nothing to allocate per delivery.
  if (!span.isRecording() && !i.metrics) return NOOP_DELIVERY;
  return new DeliveryTelemetry(api, i, span, parent);
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
