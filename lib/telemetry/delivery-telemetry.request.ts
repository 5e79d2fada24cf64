import { NOOP_DELIVERY, type PaymentsDeliveryTelemetry } from './payments.telemetry.js';

/** Where the signature guard leaves the delivery's telemetry on the request, for the controller and the filter. */
const DELIVERY_TELEMETRY = Symbol('payments:delivery_telemetry');

/** Keeps `telemetry` on `request` (the guard does this when a delivery arrives). */
export function attachDeliveryTelemetry(request: object, telemetry: PaymentsDeliveryTelemetry): void {
  // The no-op is what `deliveryTelemetryOf` answers anyway: no property is added to the request for it.
  if (telemetry === NOOP_DELIVERY) return;
  (request as { [DELIVERY_TELEMETRY]?: PaymentsDeliveryTelemetry })[DELIVERY_TELEMETRY] = telemetry;
}

/** The telemetry the guard attached to `request`, or a no-op when the guard did not run. */
export function deliveryTelemetryOf(request: object): PaymentsDeliveryTelemetry {
  return (request as { [DELIVERY_TELEMETRY]?: PaymentsDeliveryTelemetry })[DELIVERY_TELEMETRY] ?? NOOP_DELIVERY;
}
