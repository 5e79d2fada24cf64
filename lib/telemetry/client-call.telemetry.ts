// Types only: @opentelemetry/api is an optional peer, loaded once at boot with `await import(...)`.
import type { Attributes, Context, Span } from '@opentelemetry/api';
import type { Instruments } from './payments-telemetry.instruments.js';
import { PAYMENTS_CLIENT_RETRY_EVENT, PaymentsAttributes as A } from './payments-telemetry.names.js';
import {
  errorType,
  type OtelApi,
  type PaymentsClientCallTelemetry,
  type TelemetryClientAttempt,
} from './telemetry.types.js';

const UUID_SEGMENT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

const NOOP_CLIENT_CALL: PaymentsClientCallTelemetry = Object.freeze({
  attempt: <T extends TelemetryClientAttempt>(fn: () => Promise<T>) => fn(),
  retry: () => undefined,
  end: () => undefined,
});

/**
 * Starts the span of one logical client call `{method} {url.template}` (kind CLIENT, HTTP client
 * semantic conventions) as a child of the active context.
 */
export function startClientCallTelemetry(
  api: OtelApi | undefined,
  i: Instruments | undefined,
  method: string,
  path: string,
  server: { address: string; port: number },
): PaymentsClientCallTelemetry {
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
