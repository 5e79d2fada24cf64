import { Injectable } from '@nestjs/common';
import { PAYMENT_EVENT_HANDLER_METADATA } from '../payments.constants.js';
import type { PaymentEventPattern } from './payment-event.types.js';

/** Reads what `@OnPaymentEvent` wrote. Kept apart from discovery, as `@nestjs/bullmq` does. */
@Injectable()
export class PaymentEventsMetadataAccessor {
  /** The patterns a method subscribes to, or `undefined` when it carries no `@OnPaymentEvent`. */
  getEventPatterns(method: unknown): readonly PaymentEventPattern[] | undefined {
    if (typeof method !== 'function') return undefined;
    const patterns = Reflect.getMetadata(PAYMENT_EVENT_HANDLER_METADATA, method) as PaymentEventPattern[] | undefined;
    return patterns && patterns.length > 0 ? patterns : undefined;
  }
}
