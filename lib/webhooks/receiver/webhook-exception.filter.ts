import { Catch, Inject, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { NOOP_DELIVERY } from '../../telemetry/payments.telemetry.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { PAYMENTS_DISPATCH_PLUGINS, type PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import { WebhookDeliveryOutcome } from './webhook-delivery.outcome.js';

/**
 * Scoped to the webhook controller, so it runs before any global filter of the host app. It sees what
 * was thrown before the route ran (a global guard, pipe or interceptor of the host: no delivery span was
 * started yet) or while it wrote its answer; the route ends every delivery it received itself. Either
 * way `WebhookDeliveryOutcome` answers: refused deliveries keep the status of the answer table
 * (docs/webhooks.md) and a body of `{ received: false, error }`, and an unexpected error answers a bare
 * 500 (the service retries) without leaking its message.
 */
@Catch()
export class WebhookExceptionFilter implements ExceptionFilter {
  private readonly outcome: WebhookDeliveryOutcome;

  constructor(
    adapterHost: HttpAdapterHost,
    @Optional() @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks?: ResolvedWebhooksOptions,
    @Optional() appConfig?: ApplicationConfig,
    @Optional() @Inject(PAYMENTS_RUNTIME) runtime?: PaymentsRuntime,
    @Optional() @Inject(PAYMENTS_DISPATCH_PLUGINS) plugins?: readonly PaymentsDispatchPlugin[],
  ) {
    this.outcome = new WebhookDeliveryOutcome(adapterHost, webhooks, appConfig, runtime, plugins);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    this.outcome.failed(host.switchToHttp().getResponse<unknown>(), exception, NOOP_DELIVERY);
  }
}
