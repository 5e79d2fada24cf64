import type { PaymentsDeliveryTelemetry } from './payments.telemetry.js';

/** Where the signature guard leaves the delivery's telemetry on the request, for the controller and the filter. */
const DELIVERY_TELEMETRY = Symbol('payments:delivery_telemetry');

const NOOP: PaymentsDeliveryTelemetry = Object.freeze({
  verified: () => undefined,
  run: <T>(fn: () => Promise<T>) => fn(),
  end: () => undefined,
  rejected: () => undefined,
});

/** Keeps `telemetry` on `request` (the guard does this when a delivery arrives). */
export function attachDeliveryTelemetry(request: object, telemetry: PaymentsDeliveryTelemetry): void {
  (request as { [DELIVERY_TELEMETRY]?: PaymentsDeliveryTelemetry })[DELIVERY_TELEMETRY] = telemetry;
}

/** The telemetry the guard attached to `request`, or a no-op when the guard did not run. */
export function deliveryTelemetryOf(request: object): PaymentsDeliveryTelemetry {
  return (request as { [DELIVERY_TELEMETRY]?: PaymentsDeliveryTelemetry })[DELIVERY_TELEMETRY] ?? NOOP;
}
