import type { ServerResponse } from 'node:http';
import {
  Controller,
  HttpCode,
  Inject,
  Optional,
  Post,
  Req,
  Res,
  SetMetadata,
  UseFilters,
  VERSION_NEUTRAL,
  type Type,
} from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import { PAYMENTS_WEBHOOK_ROUTE_METADATA } from '../contracts/payments-webhooks.constants.js';
import {
  PaymentEventsProcessor,
  type PaymentEventsProcessingResult,
} from '../contracts/payment-events-processor.interface.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { WebhookExceptionFilter } from './webhook-exception.filter.js';
import { WebhookRawBodyReader } from './webhook-raw-body.reader.js';
import {
  WebhookDeliveryChecks,
  type VerifiedWebhookDelivery,
  type WebhookRequestLike,
} from './webhook-delivery.checks.js';
import { WebhookDeliveryOutcome } from './webhook-delivery.outcome.js';
import {
  NOOP_DELIVERY,
  PaymentsTelemetry,
  type PaymentsDeliveryTelemetry,
} from '../../telemetry/payments.telemetry.js';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { isPromiseLike, toPromise, type Pending } from '../../core/payments.pending.js';

export type { WebhookReceiptBody } from './webhook-delivery.outcome.js';

/**
 * Builds the receiver for `path`: a new controller class per call, so that the route is the
 * configured one without touching the metadata of a shared class (two apps in one process can use
 * two paths). `POST {path}` starts the delivery's span, runs `WebhookDeliveryChecks.check`, hands the
 * verified event to the `PaymentEventsProcessor` and answers its status (200, 409, 500 or 503; never
 * 201) with `{ received: true, outcome }`, or the refusal of the checks; `WebhookDeliveryOutcome` ends
 * every delivery. Class and handler carry `PAYMENTS_WEBHOOK_ROUTE_METADATA` (see
 * `isPaymentsWebhookRoute`). The module calls this for you.
 */
export function createPaymentsWebhookController(path: string): Type<unknown> {
  @Controller({ path, version: VERSION_NEUTRAL })
  @SetMetadata(PAYMENTS_WEBHOOK_ROUTE_METADATA, true)
  @UseFilters(WebhookExceptionFilter)
  class PaymentsWebhookController {
    private readonly outcome: WebhookDeliveryOutcome;

    constructor(
      @Inject(PaymentEventsProcessor) private readonly processor: PaymentEventsProcessor,
      @Inject(HttpAdapterHost) adapterHost: HttpAdapterHost,
      @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions,
      @Inject(WebhookDeliveryChecks) private readonly checks: WebhookDeliveryChecks,
      @Inject(WebhookRawBodyReader) private readonly bodyReader: WebhookRawBodyReader,
      @Optional()
      @Inject(PaymentsTelemetry)
      private readonly telemetry: PaymentsTelemetry = PaymentsTelemetry.disabled(),
      @Optional() @Inject(ApplicationConfig) appConfig?: ApplicationConfig,
      @Optional() @Inject(PAYMENTS_RUNTIME) runtime?: PaymentsRuntime,
    ) {
      this.outcome = new WebhookDeliveryOutcome(adapterHost, webhooks, appConfig, runtime);
    }

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
      // The delivery span starts here (child of the app's HTTP server span); `outcome` ends it.
      const telemetry = this.telemetry.startDelivery();
      // Verified first thing, by the checks called directly (not as a Nest guard, which costs a context
      // and promises per delivery); the host's global guards ran before.
      let verified: Pending<VerifiedWebhookDelivery>;
      try {
        verified = this.checks.check(request);
      } catch (error) {
        return this.outcome.failed(response, error, telemetry);
      }
      if (isPromiseLike(verified)) {
        return Promise.resolve(verified).then(
          (delivery) => this.run(response, delivery, telemetry),
          (error: unknown) => this.outcome.failed(response, error, telemetry),
        );
      }
      return this.run(response, verified, telemetry);
    }

    private run(
      response: unknown,
      delivery: VerifiedWebhookDelivery,
      telemetry: PaymentsDeliveryTelemetry,
    ): Pending<void> {
      telemetry.verified(delivery.event);
      let processed: Pending<PaymentEventsProcessingResult>;
      try {
        // Handler, queue and client spans become children of the delivery span.
        processed =
          telemetry === NOOP_DELIVERY
            ? this.processor.process(delivery.event, delivery.receivedAt)
            : telemetry.run(() => toPromise(() => this.processor.process(delivery.event, delivery.receivedAt)));
      } catch (error) {
        return this.outcome.failed(response, error, telemetry);
      }
      // Answered at once when nothing had to wait (memory store, a handler that returns no promise).
      if (isPromiseLike(processed)) {
        return processed.then(
          (result) => this.outcome.answered(response, delivery, telemetry, result),
          (error: unknown) => this.outcome.failed(response, error, telemetry),
        );
      }
      this.outcome.answered(response, delivery, telemetry, processed);
    }
  }
  return PaymentsWebhookController;
}
