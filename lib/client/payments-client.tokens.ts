import { Inject } from '@nestjs/common';
import { getPaymentsInstanceToken } from '../core/payments.instance.js';
import { PaymentsService } from './payments.service.js';

/**
 * The injection token of the client of one module instance: the `PaymentsService` class itself for
 * the unnamed instance, a string for a named one (`PaymentsModule.forRoot({ name: 'eu', ... })`).
 *
 * @example
 * const eu = app.get<PaymentsService>(getPaymentsServiceToken('eu'));
 */
export function getPaymentsServiceToken(name?: string): typeof PaymentsService | string {
  return getPaymentsInstanceToken(PaymentsService, name);
}

/**
 * Injects the client of the instance `name` (the unnamed one when omitted).
 *
 * @example
 * constructor(@InjectPaymentsService('eu') private readonly eu: PaymentsService) {}
 */
export const InjectPaymentsService = (name?: string): PropertyDecorator & ParameterDecorator => Inject(getPaymentsServiceToken(name));
