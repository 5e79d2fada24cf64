import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { PAYMENTS_RUNTIME } from '../../core/payments.runtime.js';
import { isPromiseLike, type Pending } from '../../core/payments.pending.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import type { PaymentsRuntime } from '../../core/payments.runtime.js';
import type { PaymentEvent } from '../contracts/payment-event.types.js';
import { RAW_BODY_MISSING_MESSAGE, type WebhookRejectionReason } from '../contracts/payments-webhooks.messages.js';
import { parseWebhookPayload } from './webhook-payload.parser.js';
import { WebhookLogSampler } from '../log/webhook-log.sampler.js';
import { WebhookSecretMismatchDetector } from './secret-mismatch.detector.js';
import { WebhookRejectionException } from './webhook-rejection.exception.js';
import type { WebhookVerificationResult } from '../contracts/webhook-verifier.interface.js';
import { webhooksLogger } from '../log/receiver.logger.js';
import { ApplicationConfig } from '@nestjs/core';
import { servedRouteOf } from './served-route.js';
import { signatureHeadersOf } from './signature-headers.js';

/** A delivery that passed the checks: the value `check()` returns, passed on by the route. */
export interface VerifiedWebhookDelivery {
  event: PaymentEvent;
  receivedAt: Date;
}

/** The request, as much of it as the checks read; Express and Fastify requests both fit. */
export interface WebhookRequestLike {
  headers: Readonly<Record<string, string | string[] | undefined>>;
  rawBody?: unknown;
  secure?: boolean;
  protocol?: string;
}

/**
 * Lets a webhook delivery through only once it is proven to come from the service. A plain service
 * with one entry, `check(request)`, which the route calls first thing; the checks, in this order:
 * HTTPS when required (403) -> size (413) -> raw body present (500, with a log line naming the fix; 415
 * when the framework kept no raw bytes because the body is not declared as JSON) ->
 * the configured verifier over the RAW bytes (401) -> JSON and WebhookEventPayload shape (400) ->
 * `webhook_id` among `endpointIds` (401). Nothing is parsed, stored or run before the signature is
 * verified. Override the protected hooks to adapt one step.
 */
@Injectable()
export class WebhookDeliveryChecks {
  protected readonly logger: Logger;
  /** Refusals are sampled per reason: anyone can send them, so they must not set the log volume. */
  protected readonly rejections = new WebhookLogSampler({
    write: (line) => this.logger.warn(line),
    now: () => this.runtime.now(),
  });

  /** A run of signature failures and no valid one: the secret is probably the wrong one (sampled). */
  protected readonly secretMismatch = new WebhookSecretMismatchDetector(
    (line) => this.logger.warn(line),
    () => this.runtime.now(),
  );

  /** The scheme's header names, read once on the first refused signature (null: not read yet). */
  private signatureHeaders: readonly string[] | undefined | null = null;

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) protected readonly webhooks: ResolvedWebhooksOptions,
    @Inject(PAYMENTS_RUNTIME) protected readonly runtime: PaymentsRuntime,
    @Optional() private readonly appConfig?: ApplicationConfig,
  ) {
    this.logger = webhooksLogger(webhooks);
  }

  /**
   * Every check of a delivery, in order; throws the refusal (a `WebhookRejectionException`), or
   * returns the verified event and its reception time, as a value. The receiver's route calls it first
   * thing (not as a Nest guard: one less promise and context per delivery); the host's own global guards
   * still run before it. A promise only when the verifier returns one (both built-in ones are synchronous).
   */
  check(request: WebhookRequestLike): Pending<VerifiedWebhookDelivery> {
    const receivedAt = new Date(this.runtime.now());
    const webhooks = this.webhooks;
    if (webhooks.disabled) {
      // The route exists (static `receiver`) but the options factory turned webhooks off.
      this.reject(404, 'webhooks_disabled', 'webhooks are disabled by the module options');
    }

    if (webhooks.requireHttps && !this.isSecure(request)) {
      this.reject(
        403,
        'https_required',
        'plain HTTP while webhooks.requireHttps is on (behind a proxy, enable trust proxy)',
      );
    }
    const declared = this.declaredLength(request);
    if (declared !== undefined && declared > webhooks.maxBodyBytes) {
      this.reject(413, 'payload_too_large', `Content-Length ${declared} > maxBodyBytes ${webhooks.maxBodyBytes}`);
    }
    const rawBody = this.getRawBody(request);
    if (!rawBody) {
      // Fastify parses text/plain into a string and keeps no raw bytes of it, even with `rawBody: true`:
      // such a request is input the service never sends, not a misconfigured app, so it is refused with
      // a 4xx (not a 500 and an error line that anyone could trigger at will).
      if (!this.isJsonContentType(request)) {
        this.reject(415, 'unsupported_media_type', 'the body is not declared as JSON and no raw bytes of it were kept');
      }
      this.logger.error(RAW_BODY_MISSING_MESSAGE);
      throw new WebhookRejectionException(500, 'raw_body_unavailable');
    }
    if (rawBody.length > webhooks.maxBodyBytes) {
      this.reject(413, 'payload_too_large', `body of ${rawBody.length} bytes > maxBodyBytes ${webhooks.maxBodyBytes}`);
    }

    const verification = this.verify(webhooks, rawBody, request);
    if (isPromiseLike(verification)) {
      return Promise.resolve(verification).then((result) =>
        this.accept(webhooks, rawBody, request.headers, result, receivedAt),
      );
    }
    return this.accept(webhooks, rawBody, request.headers, verification, receivedAt);
  }

  /** After the verifier: signature (401), JSON and shape (400), endpoint (401). */
  private accept(
    webhooks: ResolvedWebhooksOptions,
    rawBody: Buffer,
    headers: WebhookRequestLike['headers'],
    verification: WebhookVerificationResult,
    receivedAt: Date,
  ): VerifiedWebhookDelivery {
    if (!verification.valid) {
      const missing = this.missingSignatureHeaders(webhooks, headers);
      // A delivery without the scheme's headers is not a wrong secret: it says nothing of the key.
      if (missing === undefined) this.secretMismatch.invalid(() => servedRouteOf(webhooks.path, this.appConfig));
      this.reject(
        401,
        'invalid_signature',
        missing === undefined ? verification.reason : `${verification.reason} (no ${missing.join(', ')} header)`,
        missing,
      );
    }
    this.secretMismatch.valid();

    const parsed = parseWebhookPayload(rawBody);
    if (!parsed.ok) this.reject(400, parsed.problem, parsed.detail);
    const { event } = parsed;

    if (!this.isEndpointAllowed(webhooks, event)) {
      this.reject(401, 'unknown_endpoint', `webhook_id of event ${event.id} is not in endpointIds`);
    }
    // No 'Received' line: a delivery that goes well logs nothing by default (docs/logging.md).
    return { event, receivedAt };
  }

  /** True when the request came over HTTPS; honours X-Forwarded-Proto only if the app trusts its proxy. */
  protected isSecure(request: WebhookRequestLike): boolean {
    // Express: req.secure / req.protocol follow `app.set('trust proxy', ...)`; Fastify: request.protocol
    // follows the `trustProxy` option. Neither reads X-Forwarded-Proto from an untrusted peer.
    return request.secure === true || request.protocol === 'https';
  }

  /** The bytes exactly as received: `rawBody: true` (Express, Fastify), or read by the route itself (`bodyParser: false`). */
  protected getRawBody(request: WebhookRequestLike): Buffer | undefined {
    return Buffer.isBuffer(request.rawBody) ? request.rawBody : undefined;
  }

  /** Whether the request declares a JSON body (`application/json` or a `+json` type), as deliveries do. */
  protected isJsonContentType(request: WebhookRequestLike): boolean {
    const header = request.headers['content-type'];
    const value = (Array.isArray(header) ? header[0] : header) ?? '';
    const type = value.split(';', 1)[0]!.trim().toLowerCase();
    return type === 'application/json' || type.endsWith('+json');
  }

  /**
   * Runs the configured verifier; a verifier that throws (or rejects) counts as a failed verification.
   * Returns the verifier's own answer: a promise only when the verifier returns one.
   */
  protected verify(
    webhooks: ResolvedWebhooksOptions,
    rawBody: Buffer,
    request: WebhookRequestLike,
  ): WebhookVerificationResult | Promise<WebhookVerificationResult> {
    try {
      const result = webhooks.verifier.verify({ rawBody, headers: request.headers });
      return isPromiseLike(result) ? Promise.resolve(result).catch(verifierThrew) : result;
    } catch (error) {
      return verifierThrew(error);
    }
  }

  /** `webhook_id` among `endpointIds` (case-insensitive), or any when `endpointIds` is not set. */
  protected isEndpointAllowed(webhooks: ResolvedWebhooksOptions, event: PaymentEvent): boolean {
    return webhooks.endpointIds === undefined || webhooks.endpointIds.has(event.webhook_id.toLowerCase());
  }

  /**
   * Logs the refusal (reason code and a detail free of header values and secrets; sampled per reason)
   * and throws it.
   */
  protected reject(
    status: number,
    reason: WebhookRejectionReason,
    detail: string,
    missingHeaders?: readonly string[],
  ): never {
    this.rejections.log(reason, `Rejected delivery with ${status} ${reason}: ${detail}`);
    throw new WebhookRejectionException(status, reason, missingHeaders);
  }

  /**
   * The headers of the configured scheme that `headers` lacks (undefined when it has them all, or when the
   * verifier cannot say which it reads): a message that lost them on its way is refused by their name.
   */
  protected missingSignatureHeaders(
    webhooks: ResolvedWebhooksOptions,
    headers: WebhookRequestLike['headers'],
  ): string[] | undefined {
    if (this.signatureHeaders === null) this.signatureHeaders = signatureHeadersOf(webhooks.verifier);
    const missing = this.signatureHeaders?.filter((name) => headers[name] === undefined);
    return missing === undefined || missing.length === 0 ? undefined : missing;
  }

  private declaredLength(request: WebhookRequestLike): number | undefined {
    const header = request.headers['content-length'];
    const value = Array.isArray(header) ? header[0] : header;
    if (value === undefined || !/^\d+$/.test(value)) return undefined;
    return Number(value);
  }
}

function verifierThrew(error: unknown): WebhookVerificationResult {
  return { valid: false, reason: `verifier threw ${error instanceof Error ? error.name : typeof error}` };
}
