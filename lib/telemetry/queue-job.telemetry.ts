// Types only: @opentelemetry/api is an optional peer, loaded once at boot with `await import(...)`.
import type { Attributes, ObservableResult } from '@opentelemetry/api';
import type { Instruments } from './payments-telemetry.instruments.js';
import { PaymentsAttributes as A, PaymentsSpanNames } from './payments-telemetry.names.js';
import { fromTraceparent, toTraceparent } from './traceparent.codec.js';
import { errorType, type OtelApi, type TelemetryEventRef } from './telemetry.types.js';

/**
 * Wraps the enqueue of `event` in a producer span `send {queue}`; `fn` receives the W3C
 * `traceparent` of that span (undefined when not sampled), to store in the job.
 */
export async function enqueueInSpan<R extends string>(
  api: OtelApi | undefined,
  i: Instruments | undefined,
  queueName: string,
  event: TelemetryEventRef,
  fn: (traceparent: string | undefined) => Promise<R>,
): Promise<R> {
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
export async function processJobInSpan<R extends { outcome: string }>(
  api: OtelApi | undefined,
  i: Instruments | undefined,
  queueName: string,
  event: TelemetryEventRef,
  attempt: number,
  traceparent: string | undefined,
  fn: () => Promise<R>,
): Promise<R> {
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
export function observeFailedJobs(
  i: Instruments | undefined,
  queueName: string,
  count: () => Promise<number>,
): () => void {
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

function messagingAttributes(queueName: string, type: string, name: string, messageId: string): Attributes {
  return {
    [A.messagingSystem]: 'bullmq',
    [A.messagingDestination]: queueName,
    [A.messagingOperationType]: type,
    [A.messagingOperationName]: name,
    [A.messagingMessageId]: messageId,
  };
}
