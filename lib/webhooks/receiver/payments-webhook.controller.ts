import type { ServerResponse } from 'node:http';
import {
  Controller,
  HttpCode,
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
import type { PaymentsWebhookReceipt } from '../contracts/payments-webhook-receipt.types.js';
import { WebhookExceptionFilter } from './webhook-exception.filter.js';
import { WebhookRawBodyReader } from './webhook-raw-body.reader.js';
import type { WebhookRequestLike } from './webhook-delivery.checks.js';
import { PaymentsWebhookReceiver } from './payments-webhook.receiver.js';
import { isPromiseLike, type Pending } from '../../core/payments.pending.js';

export type { WebhookReceiptBody } from '../contracts/payments-webhook-receipt.types.js';

/**
 * Builds the receiver's route for `path`: a new controller class per call, so that the route is the
 * configured one without touching the metadata of a shared class (two apps in one process can use
 * two paths). `POST {path}` hands the request to the instance's `PaymentsWebhookReceiver` (the one path
 * of every delivery: checks, processor, telemetry, listener) and writes its receipt: the status of the
 * answer table (never 201) and `{ received: true, outcome }` or `{ received: false, error }`. Class and
 * handler carry `PAYMENTS_WEBHOOK_ROUTE_METADATA` (see `isPaymentsWebhookRoute`). The module calls this
 * for you.
 */
export function createPaymentsWebhookController(path: string): Type<unknown> {
  @Controller({ path, version: VERSION_NEUTRAL })
  @SetMetadata(PAYMENTS_WEBHOOK_ROUTE_METADATA, true)
  @UseFilters(WebhookExceptionFilter)
  class PaymentsWebhookController {
    constructor(
      @Inject(PaymentsWebhookReceiver) private readonly receiver: PaymentsWebhookReceiver,
      @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
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
          .then((read) => (read ? this.answer(request, response) : undefined));
      }
      return this.answer(request, response);
    }

    private answer(request: WebhookRequestLike, response: unknown): Pending<void> {
      // Verified first thing, by the receiver called directly (not as a Nest guard, which costs a context
      // and promises per delivery); the host's global guards ran before. It never rejects.
      const receipt = this.receiver.receiveRequest(request);
      if (isPromiseLike(receipt)) return receipt.then((answered) => this.reply(response, answered));
      this.reply(response, receipt);
    }

    /** Written explicitly (not returned), so a global interceptor of the host cannot reshape it. */
    private reply(response: unknown, receipt: PaymentsWebhookReceipt): void {
      this.adapterHost.httpAdapter.reply(response, receipt.body, receipt.status);
    }
  }
  return PaymentsWebhookController;
}
