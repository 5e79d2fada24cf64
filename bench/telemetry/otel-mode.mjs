/**
 * Preloaded (`node --import`) by bench/telemetry/overhead.js to put the process in one telemetry mode
 * before the app loads, from OTEL_BENCH_MODE:
 *   off  @opentelemetry/api cannot be imported (an app that did not install the optional peer)
 *   api  the API is installed, no SDK registered (the API's no-op tracer and meter)
 *   sdk  an SDK is registered: tracer provider with a batch processor and an exporter that drops the
 *        spans, meter provider with a reader, AsyncLocalStorage context manager (what NodeSDK sets up)
 */
import { register } from 'node:module';

const mode = process.env.OTEL_BENCH_MODE ?? 'api';

if (mode === 'off') {
  const hooks = `export async function resolve(specifier, context, next) {
    if (specifier === '@opentelemetry/api') throw Object.assign(new Error("Cannot find package '@opentelemetry/api'"), { code: 'ERR_MODULE_NOT_FOUND' });
    return next(specifier, context);
  }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
} else if (mode === 'sdk') {
  const { context, metrics, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
  let exported = 0;
  const exporter = {
    export(spans, done) {
      exported += spans.length;
      done({ code: 0 });
    },
    async shutdown() {},
  };
  class Reader extends MetricReader {
    async onForceFlush() {}
    async onShutdown() {}
  }
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 65536, maxExportBatchSize: 4096 })],
    }),
  );
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new Reader()] }));
  process.on('exit', () =>
    process.stderr.write(`${JSON.stringify({ type: 'otel-mode', mode, exportedSpans: exported })}\n`),
  );
} else if (mode !== 'api') {
  throw new Error(`OTEL_BENCH_MODE must be off, api or sdk, not ${mode}`);
}
