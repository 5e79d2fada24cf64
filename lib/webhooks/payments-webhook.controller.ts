import {
  Controller,
  HttpCode,
  Logger,
  Inject,
  Post,
  Req,
  Res,
  SetMetadata,
  UseFilters,
  UseGuards,
  VERSION_NEUTRAL,
  type Type,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { PAYMENTS_WEBHOOK_ROUTE_METADATA } from './payments-webhooks.constants.js';
import { PaymentEventsProcessor } from './payment-events-processor.interface.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from './payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from './payments-webhooks.options.js';
import { notifyDeliveryListener } from './journal/payment-delivery-listener.util.js';
import { PAYMENTS_WEBHOOKS_LOGGER } from './payments-webhooks.messages.js';
import { WebhookExceptionFilter } from './webhook-exception.filter.js';
import { WebhookRejectionException } from './webhook-rejection.exception.js';
import { getVerifiedWebhookDelivery, WebhookSignatureGuard } from './webhook-signature.guard.js';
import { deliveryTelemetryOf } from '../telemetry/delivery-telemetry.request.js';

const LISTENER_LOGGER = new Logger(PAYMENTS_WEBHOOKS_LOGGER);

/** The body of every delivery the receiver verified: `outcome` says what became of the event. */
export interface WebhookReceiptBody {
  received: true;
  outcome: string;
}

/**
 * Builds the receiver for `path`: a new controller class per call, so that the route is the
 * configured one without touching the metadata of a shared class (two apps in one process can use
 * two paths). `POST {path}` runs `WebhookSignatureGuard`, hands the verified event to the
 * `PaymentEventsProcessor` and answers its status (200, 409, 500 or 503; never 201) with
 * `{ received: true, outcome }`. Class and handler carry `PAYMENTS_WEBHOOK_ROUTE_METADATA`
 * (see `isPaymentsWebhookRoute`). The module calls this for you.
 */
export function createPaymentsWebhookController(path: string): Type<unknown> {
  @Controller({ path, version: VERSION_NEUTRAL })
  @SetMetadata(PAYMENTS_WEBHOOK_ROUTE_METADATA, true)
  @UseFilters(WebhookExceptionFilter)
  class PaymentsWebhookController {
    constructor(
      @Inject(PaymentEventsProcessor) private readonly processor: PaymentEventsProcessor,
      @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
      @Inject(PAYMENTS_WEBHOOKS_OPTIONS) private readonly webhooks: ResolvedWebhooksOptions | false,
    ) {}

    @Post()
    @HttpCode(200)
    @SetMetadata(PAYMENTS_WEBHOOK_ROUTE_METADATA, true)
    @UseGuards(WebhookSignatureGuard)
    async receive(@Req() request: object, @Res() response: unknown): Promise<void> {
      const delivery = getVerifiedWebhookDelivery(request);
      if (!delivery) {
        // Only reachable if the guard was removed: refuse rather than trust an unverified body.
        throw new WebhookRejectionException(401, 'invalid_signature');
      }
      // Handler, queue and client spans become children of the delivery span the guard started.
      const telemetry = deliveryTelemetryOf(request);
      const result = await telemetry.run(() => this.processor.process(delivery.event, delivery.receivedAt));
      telemetry.end(result.outcome, result.status);
      const body: WebhookReceiptBody = { received: true, outcome: result.outcome };
      const listener = this.webhooks ? this.webhooks.deliveryListener : undefined;
      if (listener) {
        const { event, receivedAt } = delivery;
        const record = {
          eventId: event.id,
          type: event.event,
          webhookId: event.webhook_id,
          status: result.status,
          outcome: result.outcome,
          receivedAt,
        };
        notifyDeliveryListener(listener, 'onDelivery', record, LISTENER_LOGGER);
      }
      // Written explicitly (not returned), so a global interceptor of the host cannot reshape it.
      this.adapterHost.httpAdapter.reply(response, body, result.status);
    }
  }
  return PaymentsWebhookController;
}
