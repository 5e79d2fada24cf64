import { Logger } from '@nestjs/common';
import { PAYMENTS_WEBHOOKS_LOGGER } from '../contracts/payments-webhooks.messages.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';

/**
 * The receiver's logger of one instance: context `PaymentsWebhooks` for the unnamed instance (its
 * lines unchanged), `PaymentsWebhooks:eu` for the instance 'eu', so that with several instances every
 * duplicate, rejected, handler and store line says whose route it was. Made once per provider.
 */
export function webhooksLogger(webhooks: ResolvedWebhooksOptions | undefined): Logger {
  const instance = webhooks?.instance;
  return new Logger(instance === undefined ? PAYMENTS_WEBHOOKS_LOGGER : `${PAYMENTS_WEBHOOKS_LOGGER}:${instance}`);
}
