import { Inject, Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import type { WebhookRejectionReason } from '../contracts/payments-webhooks.messages.js';
import { WebhookLogSampler } from '../log/webhook-log.sampler.js';
import { webhooksLogger } from '../log/receiver.logger.js';

type RawBodyRequest = IncomingMessage & { rawBody?: unknown };

/**
 * Express only. The webhook route calls `readRawBody` first (no middleware is registered, so a
 * delivery pays for no extra Express layer). When no body parser took the body (the app was created
 * with `bodyParser: false`, or the content type is not one the parsers read), it reads the request
 * stream itself into `req.rawBody`, up to `maxBodyBytes`, answering 413 as soon as the declared or
 * received size exceeds it, and 408 when the whole body has not arrived within `bodyTimeoutMs` (a
 * drip-fed body must not hold a socket forever). A client that goes away mid-body is not an
 * application error: the request ends quietly (a debug line, no error and no stack). On Fastify the
 * request is no stream (Fastify reads the body itself): Fastify apps use `rawBody: true` (and
 * Fastify's own `bodyLimit` and `requestTimeout`).
 */
@Injectable()
export class WebhookRawBodyReader {
  private readonly logger: Logger;
  /** 413 and 408 lines are sampled per reason: anyone can cause them. */
  private readonly refusals = new WebhookLogSampler({
    write: (line) => this.logger.warn(line),
    now: () => this.runtime.now(),
  });

  constructor(
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) private readonly webhooks: ResolvedWebhooksOptions,
    @Inject(PAYMENTS_RUNTIME) private readonly runtime: PaymentsRuntime,
  ) {
    this.logger = webhooksLogger(webhooks);
  }

  /**
   * Whether the body of `req` is still to be read here: webhooks on, no raw bytes kept by a parser, and
   * an Express request (a Node stream) nobody has read from. False on Fastify (its request is no stream).
   */
  needsReading(req: object): req is RawBodyRequest {
    const stream = req as Partial<RawBodyRequest>;
    return (
      this.webhooks.disabled !== true &&
      !Buffer.isBuffer(stream.rawBody) &&
      typeof stream.on === 'function' &&
      stream.readableEnded === false &&
      stream.readableDidRead === false
    );
  }

  /**
   * The webhook route calls this first when `needsReading(req)` (an Express app created with
   * `bodyParser: false`, or a body no parser took): resolves true once `req.rawBody` holds the body,
   * false when the delivery was answered here (413, 408) or the client went away. Never rejects.
   */
  readRawBody(req: RawBodyRequest, res: ServerResponse): Promise<boolean> {
    return new Promise<boolean>((resolve) =>
      this.read(
        req,
        res,
        () => resolve(true),
        () => resolve(false),
      ),
    );
  }

  private read(req: RawBodyRequest, res: ServerResponse, done: () => void, stopped: () => void): void {
    const webhooks = this.webhooks as ResolvedWebhooksOptions;
    const limit = webhooks.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      this.refuse(res, 413, 'payload_too_large', `Content-Length ${declared} > maxBodyBytes ${limit}`);
      stopped();
      return;
    }

    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (): void => {
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      // Keep a listener: an 'error' emitted after this point (the peer resets) must not become an uncaught exception.
      req.on('error', ignore);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        settle();
        // Stop buffering; Node discards the rest of the body once the answer is sent.
        this.refuse(res, 413, 'payload_too_large', `body exceeds maxBodyBytes ${limit}`);
        stopped();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      if (settled) return;
      settle();
      req.rawBody = Buffer.concat(chunks, received);
      done();
    };
    const onGone = (error?: Error): void => {
      if (settled) return;
      settle();
      // The client disconnected before the body ended ('aborted' / ECONNRESET): nobody is left to answer.
      this.logger.debug(
        `Delivery ended by the client after ${received} byte(s) of its body${error ? ` (${error.message})` : ''}`,
      );
      chunks.length = 0;
      if (!res.headersSent && !res.destroyed) res.destroy();
      stopped();
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settle();
      this.refuse(
        res,
        408,
        'request_timeout',
        `body not received within bodyTimeoutMs ${webhooks.bodyTimeoutMs} (${received} byte(s) arrived)`,
      );
      chunks.length = 0;
      stopped();
    }, webhooks.bodyTimeoutMs);
    timer.unref();
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  }

  /** Answers a refusal and closes the connection (the rest of the body is not read). */
  private refuse(res: ServerResponse, status: 408 | 413, reason: WebhookRejectionReason, detail: string): void {
    this.refusals.log(reason, `Rejected delivery with ${status} ${reason}: ${detail}`);
    if (res.headersSent || res.destroyed) return;
    const body = JSON.stringify({ received: false, error: reason });
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  }
}

const ignore = (): void => undefined;
