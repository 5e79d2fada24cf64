import type { InjectionToken, Provider } from '@nestjs/common';
import { isDefaultPaymentsInstance } from '../core/payments.instance.js';
import type { ResolvedPaymentsClientOptions } from './payments-client.options.js';
import { getPaymentsServiceToken, PAYMENTS_CLIENT } from './payments-client.tokens.js';
import { PaymentsService } from './payments.service.js';
import { PaymentsTelemetry } from '../telemetry/payments.telemetry.js';

/** What one part of the module adds to the dynamic module of an instance. */
export interface PaymentsModulePart {
  providers: Provider[];
  exports: InjectionToken[];
}

/**
 * The client part: a `PaymentsService` built from the validated client options. The options reach
 * the service's constructor only (no provider holds them, so no provider can inject the key).
 * `resolve` maps what `inject` yields to those options. Exported as `PaymentsService` for the unnamed
 * instance, as `getPaymentsServiceToken(name)` for a named one.
 */
export function createPaymentsClientPart(
  name: string,
  inject: InjectionToken[],
  resolve: (...dependencies: never[]) => ResolvedPaymentsClientOptions,
): PaymentsModulePart {
  const providers: Provider[] = [
    {
      provide: PAYMENTS_CLIENT,
      // The telemetry (spans and metrics of each call) comes first; `resolve` gets the rest.
      useFactory: (telemetry: PaymentsTelemetry, ...dependencies: never[]) =>
        new PaymentsService(resolve(...dependencies), telemetry),
      inject: [PaymentsTelemetry, ...inject],
    },
  ];
  // The unnamed instance alone provides the class token: `app.get(PaymentsService)` is never another account's client.
  const token = isDefaultPaymentsInstance(name) ? PaymentsService : getPaymentsServiceToken(name);
  return { providers: [...providers, { provide: token, useExisting: PAYMENTS_CLIENT }], exports: [token] };
}
