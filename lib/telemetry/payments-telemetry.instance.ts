// Types only: @opentelemetry/api is an optional peer.
import type { Attributes, Counter, Histogram, SpanOptions, Tracer } from '@opentelemetry/api';
import { PaymentsAttributes as A } from './payments-telemetry.names.js';
import type { Instruments } from './payments-telemetry.instruments.js';

/**
 * The instruments of a named module instance: the same tracer and instruments, each span started with
 * `payments.instance` and each measurement recorded with it. Built once at boot; the unnamed instance
 * uses the instruments as they are, so its spans, metrics and per-delivery cost do not change. The
 * failed-jobs gauge already carries its queue's name, which names the instance.
 */
export function forInstance(i: Instruments, instance: string): Instruments {
  const extra: Attributes = { [A.instance]: instance };
  const counter = (c: Counter): Counter =>
    ({ add: (value, attributes, context) => c.add(value, { ...attributes, ...extra }, context) }) as Counter;
  const histogram = (h: Histogram): Histogram =>
    ({ record: (value, attributes, context) => h.record(value, { ...attributes, ...extra }, context) }) as Histogram;
  const tracer = {
    startSpan: (name: string, options?: SpanOptions, context?: Parameters<Tracer['startSpan']>[2]) =>
      i.tracer.startSpan(name, { ...options, attributes: { ...options?.attributes, ...extra } }, context),
    startActiveSpan: i.tracer.startActiveSpan.bind(i.tracer),
  } as Tracer;
  return {
    ...i,
    tracer,
    deliveries: counter(i.deliveries),
    rejections: counter(i.rejections),
    handlerDuration: histogram(i.handlerDuration),
    storeErrors: counter(i.storeErrors),
    leasesLost: counter(i.leasesLost),
    clientRequests: counter(i.clientRequests),
    clientRetries: counter(i.clientRetries),
    clientDuration: histogram(i.clientDuration),
    reconcileIntents: counter(i.reconcileIntents),
  };
}
