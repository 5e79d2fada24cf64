import { PAYMENT_EVENT_HANDLER_METADATA } from '../payments.constants.js';
import type { PaymentEventHandlerFn, PaymentEventPattern } from './payment-event.types.js';

/**
 * Routes verified webhook events to the decorated method, once per event id (see `IdempotencyStore`).
 * `types` are documented event names or the wildcards `'payment_intent.*'`, `'setup_intent.*'`,
 * `'charge.*'` and `'*'`; a misspelt name does not compile. The method receives the event, typed by
 * the names it subscribes to, and a `PaymentEventContext`. Decorators add up: one method may carry
 * several `@OnPaymentEvent`s, and one decorator several names.
 *
 * Works on singleton providers and controllers (including `useValue` / `useFactory` providers);
 * request-scoped and transient ones are skipped with a warning.
 *
 * @example
 * \@OnPaymentEvent('payment_intent.succeeded', 'charge.succeeded')
 * async paid(event: PaymentEvent<'payment_intent.succeeded' | 'charge.succeeded'>, ctx: PaymentEventContext) {}
 */
export function OnPaymentEvent<const P extends readonly [PaymentEventPattern, ...PaymentEventPattern[]]>(
  ...types: P
): <M extends PaymentEventHandlerFn<P[number]>>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void {
  if (types.length === 0) throw new TypeError('@OnPaymentEvent() needs at least one event name or wildcard');
  return (_target, _propertyKey, descriptor) => {
    const method = descriptor.value;
    if (typeof method !== 'function') {
      throw new TypeError('@OnPaymentEvent() decorates methods only');
    }
    const previous = (Reflect.getMetadata(PAYMENT_EVENT_HANDLER_METADATA, method) as PaymentEventPattern[] | undefined) ?? [];
    const merged = [...previous];
    for (const type of types) {
      if (!merged.includes(type)) merged.push(type);
    }
    Reflect.defineMetadata(PAYMENT_EVENT_HANDLER_METADATA, merged, method);
  };
}
