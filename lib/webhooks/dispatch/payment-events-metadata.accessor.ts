import { Injectable } from '@nestjs/common';
import {
  PAYMENT_EVENT_HANDLER_METADATA,
  PAYMENT_EVENT_HANDLER_OPTIONS_METADATA,
} from '../contracts/payments-webhooks.constants.js';
import type { OnPaymentEventOptions } from './on-payment-event.decorator.js';
import type { PaymentEventPattern } from '../contracts/payment-event.types.js';

/** Reads what `@OnPaymentEvent` wrote. Kept apart from discovery, as `@nestjs/bullmq` does. */
@Injectable()
export class PaymentEventsMetadataAccessor {
  /** The patterns a method subscribes to, or `undefined` when it carries no `@OnPaymentEvent`. */
  getEventPatterns(method: unknown): readonly PaymentEventPattern[] | undefined {
    if (typeof method !== 'function') return undefined;
    const patterns = Reflect.getMetadata(PAYMENT_EVENT_HANDLER_METADATA, method) as PaymentEventPattern[] | undefined;
    return patterns && patterns.length > 0 ? patterns : undefined;
  }

  /** The merged `OnPaymentEventOptions` of a method (an empty object when none were given). */
  getHandlerOptions(method: unknown): Readonly<OnPaymentEventOptions> {
    if (typeof method !== 'function') return {};
    return (
      (Reflect.getMetadata(PAYMENT_EVENT_HANDLER_OPTIONS_METADATA, method) as OnPaymentEventOptions | undefined) ?? {}
    );
  }
}
