// Types only: @opentelemetry/api is an optional peer.
import type { Instruments } from './payments-telemetry.instruments.js';
import { PaymentsAttributes as A, PaymentsSpanNames } from './payments-telemetry.names.js';
import type { OtelApi } from './telemetry.types.js';

/** The counts of one sweep, as the reconciler reports them. */
export interface TelemetrySweep {
  checked: number;
  reconciled: number;
  settled: number;
  pending: number;
  gaveUp: number;
  gone: number;
  stopped?: string;
}

/** Runs one sweep in a `payments.reconcile.sweep` span; counts its intents by result. */
export async function sweepInSpan<R extends TelemetrySweep>(
  api: OtelApi | undefined,
  i: Instruments | undefined,
  fn: () => Promise<R>,
): Promise<R> {
  if (!api || !i || (!i.tracing && !i.metrics)) return fn();
  const span = i.tracer.startSpan(
    PaymentsSpanNames.reconcileSweep,
    { kind: api.SpanKind.INTERNAL },
    api.context.active(),
  );
  try {
    const result = await fn();
    if (i.metrics) {
      const counts: Array<[string, number]> = [
        ['reconciled', result.reconciled],
        ['settled', result.settled],
        ['pending', result.pending],
        ['gave_up', result.gaveUp],
        ['gone', result.gone],
      ];
      for (const [name, n] of counts) if (n > 0) i.reconcileIntents.add(n, { [A.reconcileResult]: name });
    }
    if (span.isRecording()) {
      span.setAttributes({
        [A.reconcileChecked]: result.checked,
        [A.reconcileReconciled]: result.reconciled,
        [A.reconcilePending]: result.pending,
        [A.reconcileGaveUp]: result.gaveUp,
      });
      if (result.stopped) span.setAttribute(A.reconcileStopped, result.stopped);
    }
    return result;
  } finally {
    span.end();
  }
}
