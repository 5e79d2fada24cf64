import { Inject, Injectable, Optional, type Logger } from '@nestjs/common';
import { isPromiseLike, toPromise, type Pending } from '../../core/payments.pending.js';
import { getPaymentsInstanceToken } from '../../core/payments.instance.js';
import {
  NOOP_DELIVERY,
  PaymentsTelemetry,
  type PaymentsDeliveryTelemetry,
} from '../../telemetry/payments.telemetry.js';
import {
  PaymentEventsProcessor,
  type PaymentEventsProcessingResult,
} from '../contracts/payment-events-processor.interface.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import type { PaymentsWebhookDelivery, PaymentsWebhookReceipt } from '../contracts/payments-webhook-receipt.types.js';
import { PAYMENTS_DISPATCH_PLUGINS, type PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import { webhooksLogger } from '../log/receiver.logger.js';
import { AnswerHooks } from './answer.hooks.js';
import { answeredReceipt, refusedReceipt } from './webhook-receipts.js';
import {
  WebhookDeliveryChecks,
  type VerifiedWebhookDelivery,
  type WebhookRequestLike,
} from './webhook-delivery.checks.js';
import { WebhookRejectionException } from './webhook-rejection.exception.js';

/**
 * The receiver of one `PaymentsModule` instance, below HTTP: give it the bytes and the headers of a delivery,
 * from any transport, and it runs what the route runs, in the same order (HTTPS when it is told the
 * delivery came over plain HTTP, size, signature over the raw bytes, payload shape, endpoint ids, then the
 * processor: claims and handlers, or the queue), with the same telemetry, plug-in hooks (the delivery listener's among them) and log lines,
 * and answers the row of the answer table as a value (`PaymentsWebhookReceipt`: status, outcome, whether to
 * retry). The route is a thin caller of it; so are the RabbitMQ and NATS consumers and the function handler.
 *
 * `receive` answers a value, not a promise, when nothing had to wait (the memory store and a synchronous
 * handler): `await` it either way. It never rejects: an unexpected error is the receipt 500 `internal_error`
 * (logged, retried).
 *
 * @example
 * const receipt = await app.get(PaymentsWebhookReceiver).receive({ body: message.content, headers });
 * if (receipt.retry) channel.nack(message); else channel.ack(message);
 */
@Injectable()
export class PaymentsWebhookReceiver {
  private readonly logger: Logger;
  /** The plug-ins told what each delivery was answered (the delivery listener, among others). */
  private readonly answers: AnswerHooks;

  constructor(
    @Inject(PaymentEventsProcessor) private readonly processor: PaymentEventsProcessor,
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) webhooks: ResolvedWebhooksOptions,
    @Inject(WebhookDeliveryChecks) private readonly checks: WebhookDeliveryChecks,
    @Optional()
    @Inject(PaymentsTelemetry)
    private readonly telemetry: PaymentsTelemetry = PaymentsTelemetry.disabled(),
    @Optional() @Inject(PAYMENTS_DISPATCH_PLUGINS) plugins?: readonly PaymentsDispatchPlugin[],
  ) {
    this.logger = webhooksLogger(webhooks);
    this.answers = new AnswerHooks(plugins, this.logger);
  }

  /** One delivery, from a broker message, a function's event or your own transport. See the class. */
  receive(delivery: PaymentsWebhookDelivery): Pending<PaymentsWebhookReceipt> {
    return this.receiveRequest({
      headers: lowerCasedHeaders(delivery.headers),
      rawBody: bytesOf(delivery.body),
      // Judged only when the caller says the delivery came over plain HTTP.
      secure: delivery.secure !== false,
    });
  }

  /**
   * The route's entry: the request itself (Express and Fastify requests fit `WebhookRequestLike`), so an
   * HTTP delivery allocates nothing more than before. Not part of the public surface.
   */
  receiveRequest(request: WebhookRequestLike): Pending<PaymentsWebhookReceipt> {
    // The delivery span starts here (over HTTP, a child of the app's server span); every exit ends it.
    const telemetry = this.telemetry.startDelivery();
    let verified: Pending<VerifiedWebhookDelivery>;
    try {
      verified = this.checks.check(request);
    } catch (error) {
      return this.failed(error, telemetry);
    }
    if (isPromiseLike(verified)) {
      return Promise.resolve(verified).then(
        (delivery) => this.process(delivery, telemetry),
        (error: unknown) => this.failed(error, telemetry),
      );
    }
    return this.process(verified, telemetry);
  }

  private process(
    delivery: VerifiedWebhookDelivery,
    telemetry: PaymentsDeliveryTelemetry,
  ): Pending<PaymentsWebhookReceipt> {
    telemetry.verified(delivery.event);
    let processed: Pending<PaymentEventsProcessingResult>;
    try {
      // Handler, queue and client spans become children of the delivery span.
      processed =
        telemetry === NOOP_DELIVERY
          ? this.processor.process(delivery.event, delivery.receivedAt)
          : telemetry.run(() => toPromise(() => this.processor.process(delivery.event, delivery.receivedAt)));
    } catch (error) {
      return this.failed(error, telemetry);
    }
    // Answered at once when nothing had to wait (memory store, a handler that returns no promise).
    if (isPromiseLike(processed)) {
      return processed.then(
        (result) => this.answered(delivery, telemetry, result),
        (error: unknown) => this.failed(error, telemetry),
      );
    }
    return this.answered(delivery, telemetry, processed);
  }

  /** A verified delivery the processor answered: ends its span, tells the plug-ins (`afterAnswer`), gives its receipt. */
  private answered(
    delivery: VerifiedWebhookDelivery,
    telemetry: PaymentsDeliveryTelemetry,
    result: PaymentEventsProcessingResult,
  ): PaymentsWebhookReceipt {
    telemetry.end(result.outcome, result.status);
    if (this.answers.listening) {
      const { event, receivedAt } = delivery;
      const record = {
        eventId: event.id,
        type: event.event,
        webhookId: event.webhook_id,
        status: result.status,
        outcome: result.outcome,
        receivedAt,
      };
      this.answers.tell({ kind: 'answered', record });
    }
    return answeredReceipt(result.status, result.outcome);
  }

  /**
   * A delivery that ends in an error: a refusal of the checks keeps its status and reason; anything else is
   * a 500 `internal_error` (the sender retries) logged with its stack and answered without its message.
   * Ends the span, tells the plug-ins (`afterAnswer`: the delivery listener's `onRejection`).
   */
  private failed(error: unknown, telemetry: PaymentsDeliveryTelemetry): PaymentsWebhookReceipt {
    let receipt: PaymentsWebhookReceipt;
    if (error instanceof WebhookRejectionException) {
      receipt = refusedReceipt(error.getStatus(), error.reason, error.missingHeaders);
    } else {
      this.logger.error(
        `Webhook delivery failed with 500 internal_error: ${error instanceof Error ? `${error.name}: ${error.message}` : typeof error}`,
        error instanceof Error ? error.stack : undefined,
      );
      receipt = refusedReceipt(500, 'internal_error');
    }
    telemetry.rejected(receipt.status, receipt.error!);
    if (this.answers.listening) {
      this.answers.tell({
        kind: 'refused',
        record: { status: receipt.status, reason: receipt.error!, at: new Date() },
      });
    }
    return receipt;
  }
}

/**
 * The token of the receiver of one module instance: the class for the unnamed instance, a string for a
 * named one (`app.get(getPaymentsWebhookReceiverToken('eu'))`, `@Inject(getPaymentsWebhookReceiverToken('eu'))`).
 */
export function getPaymentsWebhookReceiverToken(name?: string): typeof PaymentsWebhookReceiver | string {
  return getPaymentsInstanceToken(PaymentsWebhookReceiver, name);
}

/** The body's bytes without a copy: a Buffer as is, a Uint8Array viewed, a string as UTF-8. */
function bytesOf(body: PaymentsWebhookDelivery['body']): Buffer | undefined {
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return undefined;
}

/** Headers with lower-case names (verifiers read them so), string values only; the same object when already so. */
function lowerCasedHeaders(
  headers: PaymentsWebhookDelivery['headers'] | undefined,
): Readonly<Record<string, string | string[] | undefined>> {
  if (headers === undefined || headers === null) return {};
  let clean = true;
  for (const name in headers) {
    const value = headers[name];
    if (name !== name.toLowerCase() || (typeof value !== 'string' && value !== undefined && !Array.isArray(value))) {
      clean = false;
      break;
    }
  }
  if (clean) return headers as Readonly<Record<string, string | string[] | undefined>>;
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value: unknown = headers[name];
    if (typeof value === 'string') out[name.toLowerCase()] = value;
    else if (Array.isArray(value)) {
      const strings = value.filter((item): item is string => typeof item === 'string');
      if (strings.length > 0) out[name.toLowerCase()] = strings;
    }
  }
  return out;
}
