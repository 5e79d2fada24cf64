import { PaymentsConfigurationError, PaymentsInvalidArgumentError } from '../../errors/payments.errors.js';
import {
  PAYMENT_EVENT_HANDLER_METADATA,
  PAYMENT_EVENT_HANDLER_OPTIONS_METADATA,
} from '../contracts/payments-webhooks.constants.js';
import { ON_PAYMENT_EVENT_MESSAGES } from '../contracts/payments-webhooks.messages.js';
import type { PaymentEventHandlerFn, PaymentEventPattern } from '../contracts/payment-event.types.js';
import type { OnPaymentEventOptions } from '../contracts/payment-event-handler.types.js';

export type { OnPaymentEventOptions } from '../contracts/payment-event-handler.types.js';

const HANDLER_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/** The decorator `@OnPaymentEvent` returns, typed by the event names it subscribes to. */
export type OnPaymentEventDecorator<T extends PaymentEventPattern> = <M extends PaymentEventHandlerFn<T>>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Routes verified webhook events to the decorated method, once per event id (see `IdempotencyStore`).
 * The arguments are documented event names or the wildcards `'payment_intent.*'`, `'setup_intent.*'`,
 * `'charge.*'` and `'*'`; a misspelt name does not compile. The method receives the event, typed by
 * the names it subscribes to, and a `PaymentEventContext`. Decorators add up: one method may carry
 * several `@OnPaymentEvent`s, and one decorator several names. An `OnPaymentEventOptions` object may
 * follow the names.
 *
 * Works on singleton providers and controllers (including `useValue` / `useFactory` providers);
 * request-scoped and transient ones are skipped with a warning.
 *
 * @example
 * \@OnPaymentEvent('payment_intent.succeeded', 'charge.succeeded')
 * async paid(event: PaymentEvent<'payment_intent.succeeded' | 'charge.succeeded'>, ctx: PaymentEventContext) {}
 *
 * \@OnPaymentEvent('payment_intent.succeeded', { instance: 'eu' })
 * async paidInEurope(event: PaymentEvent<'payment_intent.succeeded'>) {} // deliveries of the instance 'eu' only
 *
 * \@OnPaymentEvent('payment_intent.succeeded', { transactional: true })
 * async fulfil(event: PaymentEvent<'payment_intent.succeeded'>) {} // writes commit with the completion record
 *
 * \@OnPaymentEvent('payment_intent.succeeded', { current: true })
 * async ship(event: PaymentEvent<'payment_intent.succeeded'>, ctx: PaymentEventContext) {} // only while the intent is succeeded; ctx.intent
 */
export function OnPaymentEvent<
  const A extends readonly [PaymentEventPattern, ...(PaymentEventPattern | OnPaymentEventOptions)[]],
>(...typesAndOptions: A): OnPaymentEventDecorator<Extract<A[number], PaymentEventPattern>> {
  const args = [...typesAndOptions];
  const last = args[args.length - 1];
  const given = typeof last === 'object' && last !== null ? (args.pop() as OnPaymentEventOptions) : undefined;
  if (args.some((arg) => typeof arg !== 'string')) {
    throw new PaymentsInvalidArgumentError('@OnPaymentEvent()', 'types', ON_PAYMENT_EVENT_MESSAGES.optionsNotLast);
  }
  const options = given === undefined ? undefined : checkedOptions(given);
  const types = args as PaymentEventPattern[];
  if (types.length === 0)
    throw new PaymentsInvalidArgumentError('@OnPaymentEvent()', 'types', ON_PAYMENT_EVENT_MESSAGES.noEventName);
  return (_target, propertyKey, descriptor) => {
    const method = descriptor.value;
    if (typeof method !== 'function') {
      throw new PaymentsInvalidArgumentError(
        '@OnPaymentEvent()',
        String(propertyKey),
        ON_PAYMENT_EVENT_MESSAGES.notAMethod,
      );
    }
    const previous =
      (Reflect.getMetadata(PAYMENT_EVENT_HANDLER_METADATA, method) as PaymentEventPattern[] | undefined) ?? [];
    const merged = [...previous];
    for (const type of types) {
      if (!merged.includes(type)) merged.push(type);
    }
    Reflect.defineMetadata(PAYMENT_EVENT_HANDLER_METADATA, merged, method);
    if (options !== undefined) {
      const previousOptions = Reflect.getMetadata(PAYMENT_EVENT_HANDLER_OPTIONS_METADATA, method) as
        OnPaymentEventOptions | undefined;
      if (
        options.instance !== undefined &&
        previousOptions?.instance !== undefined &&
        previousOptions.instance !== options.instance
      ) {
        throw new PaymentsInvalidArgumentError(
          '@OnPaymentEvent()',
          'instance',
          ON_PAYMENT_EVENT_MESSAGES.twoInstanceNames,
        );
      }
      Reflect.defineMetadata(
        PAYMENT_EVENT_HANDLER_OPTIONS_METADATA,
        Object.freeze({ ...options, ...previousOptions }),
        method,
      );
    }
  };
}

/** The spellings `@OnPaymentEvent` no longer reads, and the option each was. */
const REMOVED_SPELLINGS = { name: 'instance', id: 'handlerId' } as const;

/** The options, checked (a removed spelling, `name` or `id`, fails naming the one to write). */
function checkedOptions(options: OnPaymentEventOptions): OnPaymentEventOptions {
  for (const [removed, option] of Object.entries(REMOVED_SPELLINGS)) {
    if ((options as Record<string, unknown>)[removed] !== undefined) {
      throw new PaymentsConfigurationError(
        `@OnPaymentEvent(type, { ${removed} })`,
        `was the deprecated spelling of ${option}, and is removed`,
        `write @OnPaymentEvent(type, { ${option}: ... }) instead`,
      );
    }
  }
  const { instance, handlerId } = options as { instance?: unknown; handlerId?: unknown };
  if (instance !== undefined && (typeof instance !== 'string' || instance === '')) {
    throw new PaymentsInvalidArgumentError('@OnPaymentEvent()', 'instance', ON_PAYMENT_EVENT_MESSAGES.badInstanceName);
  }
  if (handlerId !== undefined && (typeof handlerId !== 'string' || !HANDLER_ID_PATTERN.test(handlerId))) {
    throw new PaymentsInvalidArgumentError('@OnPaymentEvent()', 'handlerId', ON_PAYMENT_EVENT_MESSAGES.badHandlerId);
  }
  if (options.current !== undefined && typeof options.current !== 'boolean') {
    throw new PaymentsInvalidArgumentError('@OnPaymentEvent()', 'current', ON_PAYMENT_EVENT_MESSAGES.badCurrent);
  }
  return { ...options };
}
