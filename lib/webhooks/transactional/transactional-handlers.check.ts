import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { PaymentsConfigurationError } from '../../errors/payments.errors.js';
import type { PaymentEventHandlers } from '../contracts/payment-event-handler.types.js';
import { PAYMENT_EVENTS_REGISTRY } from '../contracts/payments-webhooks.constants.js';

/**
 * A handler declared `{ transactional: true }` on a receiver without `webhooks.transactions` fails the
 * boot, naming the fix (it would otherwise run outside any transaction, silently).
 */
export function checkTransactionalHandlers(registry: PaymentEventHandlers): void {
  const declared = registry.handlers().filter((handler) => handler.options?.transactional === true);
  if (declared.length === 0) return;
  throw new PaymentsConfigurationError(
    'webhooks.transactions',
    `is not set, but ${declared.map((h) => h.id).join(', ')} ${declared.length === 1 ? 'is' : 'are'} declared { transactional: true }`,
    "pass webhooks.transactions: { runner: pgTransactionRunner(pool) } or { runner: clsTransactionRunner({ orm: 'typeorm' }) }, or drop { transactional: true }",
  );
}

/**
 * The one check a receiver without the transactional inbox keeps (the inbox makes it itself when it
 * is registered): `checkTransactionalHandlers` once every handler is known.
 */
@Injectable()
export class TransactionalHandlersCheck implements OnModuleInit {
  constructor(@Inject(PAYMENT_EVENTS_REGISTRY) private readonly registry: PaymentEventHandlers) {}

  onModuleInit(): void {
    checkTransactionalHandlers(this.registry);
  }
}
