import { Inject } from '@nestjs/common';
import { getPaymentsInstanceToken } from '../core/payments.instance.js';
import { PaymentsService } from './payments.service.js';

/**
 * Token of the client inside one module instance (the receiver's dispatcher injects it). Every
 * instance provides its own and exports it under `getPaymentsServiceToken(name)`, so `PaymentsService`
 * (the class) names only the unnamed instance's client, even for `app.get(PaymentsService)`.
 */
export const PAYMENTS_CLIENT = Symbol('PAYMENTS_CLIENT');

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
export const InjectPaymentsService = (name?: string): PropertyDecorator & ParameterDecorator =>
  Inject(getPaymentsServiceToken(name));
