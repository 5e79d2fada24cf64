import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { PAYMENTS_WEBHOOK_ROUTE_METADATA } from '../contracts/payments-webhooks.constants.js';

/**
 * True when `context` is the payments webhook route. Call it first in a global guard of the host app
 * (an API-key or session guard registered as `APP_GUARD`) and let the request through: deliveries do
 * not carry the app's credentials, they are authenticated by their signature, which the webhook
 * route verifies first thing, before its handlers run.
 *
 * @example
 * canActivate(context: ExecutionContext) {
 *   if (isPaymentsWebhookRoute(context, this.reflector)) return true;
 *   return this.checkApiKey(context);
 * }
 */
export function isPaymentsWebhookRoute(context: ExecutionContext, reflector: Reflector): boolean {
  return (
    reflector.getAllAndOverride<boolean | undefined>(PAYMENTS_WEBHOOK_ROUTE_METADATA, [
      context.getHandler(),
      context.getClass(),
    ]) === true
  );
}
