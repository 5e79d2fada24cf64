import type { Logger } from '@nestjs/common';
import type { DispatchHandlerResult } from '../contracts/dispatch-result.types.js';
import type {
  PaymentDeliveryListener,
  PaymentDispatchHandlerRecord,
} from '../contracts/payment-delivery-listener.interface.js';

const MAX_ERROR_CHARS = 300;

/**
 * Calls `listener[method](record)` if the listener has it; a listener that throws is logged at warn
 * level (its own bug, not the delivery's) and never changes the answer.
 */
export function notifyDeliveryListener<K extends keyof PaymentDeliveryListener>(
  listener: PaymentDeliveryListener | undefined,
  method: K,
  record: Parameters<NonNullable<PaymentDeliveryListener[K]>>[0],
  logger: Pick<Logger, 'warn'>,
): void {
  const fn = listener?.[method] as ((r: typeof record) => void) | undefined;
  if (fn === undefined) return;
  try {
    fn.call(listener, record);
  } catch (error) {
    logger.warn(
      `webhooks.deliveryListener.${method} threw and was ignored: ${error instanceof Error ? error.name : typeof error}`,
    );
  }
}

/** A dispatch's handler results as a listener sees them: errors reduced to `Name: message`. */
export function toHandlerRecords(results: readonly DispatchHandlerResult[]): PaymentDispatchHandlerRecord[] {
  return results.map((r) => {
    const record: PaymentDispatchHandlerRecord = { handler: r.handler, status: r.status };
    if (r.durationMs !== undefined) record.durationMs = r.durationMs;
    if (r.error !== undefined) {
      const text = r.error instanceof Error ? `${r.error.name}: ${r.error.message}` : typeof r.error;
      record.error = text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
    }
    return record;
  });
}
