import type { ServerResponse } from 'node:http';
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
  VERSION_NEUTRAL,
  type Type,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { PAYMENTS_WEBHOOK_ROUTE_METADATA } from '../contracts/payments-webhooks.constants.js';
import {
  PaymentEventsProcessor,
  type PaymentEventsProcessingResult,
} from '../contracts/payment-events-processor.interface.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { notifyDeliveryListener } from '../contracts/payment-delivery-listener.util.js';
import { PAYMENTS_WEBHOOKS_LOGGER } from '../contracts/payments-webhooks.messages.js';
import { WebhookExceptionFilter } from './webhook-exception.filter.js';
import { WebhookRawBodyReader } from './webhook-raw-body.reader.js';
import {
  WebhookDeliveryChecks,
  type VerifiedWebhookDelivery,
  type WebhookRequestLike,
} from './webhook-delivery.checks.js';
import { deliveryTelemetryOf } from '../../telemetry/delivery-telemetry.request.js';
import { NOOP_DELIVERY, type PaymentsDeliveryTelemetry } from '../../telemetry/payments.telemetry.js';
import { isPromiseLike, toPromise, type Pending } from '../../core/payments.pending.js';

const LISTENER_LOGGER = new Logger(PAYMENTS_WEBHOOKS_LOGGER);

/** The body of every delivery the receiver verified: `outcome` says what became of the event. */
export interface WebhookReceiptBody {
  received: true;
  outcome: string;
}

/** The receipt of each outcome, made once: frozen, so no delivery allocates one. */
const RECEIPTS = new Map<string, Readonly<WebhookReceiptBody>>();

function receiptOf(outcome: string): Readonly<WebhookReceiptBody> {
  let receipt = RECEIPTS.get(outcome);
  if (receipt === undefined) {
    receipt = Object.freeze({ received: true, outcome });
    // Outcomes are a small fixed set (the processors' own words); the bound only guards a custom processor.
    if (RECEIPTS.size < 64) RECEIPTS.set(outcome, receipt);
  }
  return receipt;
}

/**
 * Builds the receiver for `path`: a new controller class per call, so that the route is the
 * configured one without touching the metadata of a shared class (two apps in one process can use
 * two paths). `POST {path}` first runs the checks of `WebhookDeliveryChecks`, hands the verified event to the
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
      @Inject(PAYMENTS_WEBHOOKS_OPTIONS) private readonly webhooks: ResolvedWebhooksOptions,
      @Inject(WebhookDeliveryChecks) private readonly guard: WebhookDeliveryChecks,
      @Inject(WebhookRawBodyReader) private readonly bodyReader: WebhookRawBodyReader,
    ) {}

    @Post()
    @HttpCode(200)
    @SetMetadata(PAYMENTS_WEBHOOK_ROUTE_METADATA, true)
    receive(@Req() request: WebhookRequestLike, @Res() response: unknown): Pending<void> {
      // Express app without a body parser for it (`bodyParser: false`): the body is read here first, with
      // the size limit and the timeout (answered 413 / 408 by the reader itself, which then says false).
      if (this.bodyReader.needsReading(request)) {
        return this.bodyReader
          .readRawBody(request, response as ServerResponse)
          .then((read) => (read ? this.verifyThenRun(request, response) : undefined));
      }
      return this.verifyThenRun(request, response);
    }

    private verifyThenRun(request: WebhookRequestLike, response: unknown): Pending<void> {
      // Verified first thing, by the signature guard's checks called directly (not through Nest's guard
      // machinery, which costs a context and promises per delivery); the host's global guards ran before.
      const verified = this.guard.check(request);
      if (isPromiseLike(verified))
        return Promise.resolve(verified).then((delivery) => this.run(request, response, delivery));
      return this.run(request, response, verified);
    }

    private run(request: object, response: unknown, delivery: VerifiedWebhookDelivery): Pending<void> {
      // Handler, queue and client spans become children of the delivery span the guard started.
      const telemetry = deliveryTelemetryOf(request);
      const processed =
        telemetry === NOOP_DELIVERY
          ? this.processor.process(delivery.event, delivery.receivedAt)
          : telemetry.run(() => toPromise(() => this.processor.process(delivery.event, delivery.receivedAt)));
      // Answered at once when nothing had to wait (memory store, a handler that returns no promise).
      if (isPromiseLike(processed))
        return processed.then((result) => this.answer(response, delivery, telemetry, result));
      this.answer(response, delivery, telemetry, processed);
    }

    private answer(
      response: unknown,
      delivery: VerifiedWebhookDelivery,
      telemetry: PaymentsDeliveryTelemetry,
      result: PaymentEventsProcessingResult,
    ): void {
      telemetry.end(result.outcome, result.status);
      const listener = this.webhooks.deliveryListener;
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
      this.adapterHost.httpAdapter.reply(response, receiptOf(result.outcome), result.status);
    }
  }
  return PaymentsWebhookController;
}
