// Types only: @opentelemetry/api is an optional peer, loaded once at boot with `await import(...)`.
import type { SpanContext } from '@opentelemetry/api';
import type { OtelApi } from './telemetry.types.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C `traceparent` of a span context (undefined when invalid), stored in a queued job. */
export function toTraceparent(context: SpanContext, api: OtelApi): string | undefined {
  if (!api.isSpanContextValid(context)) return undefined;
  const sampled = (context.traceFlags & api.TraceFlags.SAMPLED) === api.TraceFlags.SAMPLED;
  return `00-${context.traceId}-${context.spanId}-${sampled ? '01' : '00'}`;
}

/** The span context a job's `traceparent` names, when it is well formed and valid. */
export function fromTraceparent(value: unknown, api: OtelApi): SpanContext | undefined {
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
