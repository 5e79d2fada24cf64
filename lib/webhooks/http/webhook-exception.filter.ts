import {
  Catch,
  HttpException,
  Inject,
  Logger,
  Optional,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { WebhookRejectionException } from './webhook-rejection.exception.js';
import { deliveryTelemetryOf } from '../../telemetry/delivery-telemetry.request.js';
import { notifyDeliveryListener } from '../contracts/payment-delivery-listener.util.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import { webhooksLogger } from '../contracts/payments-webhooks.logger.js';

/**
 * Scoped to the webhook controller, so it runs before any global filter of the host app: refused
 * deliveries keep the status of the answer table (docs/webhooks.md) and a body of `{ received: false, error }`, and an
 * unexpected error answers a bare 500 (the service retries) without leaking its message.
 */
@Catch()
export class WebhookExceptionFilter implements ExceptionFilter {
  private readonly logger: Logger;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(PAYMENTS_WEBHOOKS_OPTIONS) private readonly webhooks?: ResolvedWebhooksOptions,
  ) {
    this.logger = webhooksLogger(webhooks);
  }

  /** Tells the opt-in `webhooks.deliveryListener` of a refused delivery: status and reason only. */
  private rejected(status: number, reason: string): void {
    const listener = this.webhooks?.deliveryListener;
    if (listener?.onRejection) {
      notifyDeliveryListener(listener, 'onRejection', { status, reason, at: new Date() }, this.logger);
    }
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<unknown>();
    const adapter = this.adapterHost.httpAdapter;
    // Ends the delivery span the guard started (a no-op when the guard did not run).
    const telemetry = deliveryTelemetryOf(host.switchToHttp().getRequest<object>());
    if (exception instanceof WebhookRejectionException) {
      telemetry.rejected(exception.getStatus(), exception.reason);
      this.rejected(exception.getStatus(), exception.reason);
      adapter.reply(response, exception.getResponse(), exception.getStatus());
      return;
    }
    if (exception instanceof HttpException) {
      // Thrown by something of the host on this route (a global guard or pipe): keep its status.
      telemetry.rejected(exception.getStatus(), 'rejected');
      this.rejected(exception.getStatus(), 'rejected');
      adapter.reply(response, { received: false, error: 'rejected' }, exception.getStatus());
      return;
    }
    this.logger.error(
      `Webhook delivery failed with 500 internal_error: ${exception instanceof Error ? `${exception.name}: ${exception.message}` : typeof exception}`,
      exception instanceof Error ? exception.stack : undefined,
    );
    telemetry.rejected(500, 'internal_error');
    this.rejected(500, 'internal_error');
    adapter.reply(response, { received: false, error: 'internal_error' }, 500);
  }
}
