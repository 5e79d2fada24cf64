import { Inject, Injectable, Logger, type NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PAYMENTS_RESOLVED_OPTIONS } from '../payments.constants.js';
import type { ResolvedPaymentsOptions } from '../payments-options.interface.js';
import { PAYMENTS_WEBHOOKS_LOGGER } from './payments-webhooks.messages.js';

type RawBodyRequest = IncomingMessage & { rawBody?: unknown };

/**
 * Express only (the module applies it to POST {webhooks.path} when the adapter is Express): when no
 * body parser took the body (the app was created with `bodyParser: false`, or the content type is
 * not one the parsers read), it reads the request stream itself into `req.rawBody`, up to
 * `maxBodyBytes`, answering 413 as soon as the declared or received size exceeds it. On Fastify,
 * middleware runs before body parsing, so reading the stream there would break it: Fastify apps use
 * `rawBody: true`.
 */
@Injectable()
export class WebhookRawBodyMiddleware implements NestMiddleware<RawBodyRequest, ServerResponse> {
  private readonly logger = new Logger(PAYMENTS_WEBHOOKS_LOGGER);

  constructor(@Inject(PAYMENTS_RESOLVED_OPTIONS) private readonly options: ResolvedPaymentsOptions) {}

  use(req: RawBodyRequest, res: ServerResponse, next: (error?: unknown) => void): void {
    const webhooks = this.options.webhooks;
    if (webhooks === false || Buffer.isBuffer(req.rawBody) || req.readableEnded || req.readableDidRead) {
      // Disabled, or a parser already read the body (with or without keeping the bytes: the guard decides).
      next();
      return;
    }
    const limit = webhooks.maxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      this.tooLarge(res, `Content-Length ${declared} > maxBodyBytes ${limit}`);
      return;
    }

    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) {
        settled = true;
        cleanup();
        // Stop buffering; Node discards the rest of the body once the answer is sent.
        this.tooLarge(res, `body exceeds maxBodyBytes ${limit}`);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      if (settled) return;
      settled = true;
      cleanup();
      req.rawBody = Buffer.concat(chunks, received);
      next();
    };
    const onError = (error: Error): void => {
      if (settled) return;
      settled = true;
      cleanup();
      next(error);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  }

  private tooLarge(res: ServerResponse, detail: string): void {
    this.logger.warn(`Rejected delivery with 413 payload_too_large: ${detail}`);
    const body = JSON.stringify({ received: false, error: 'payload_too_large' });
    res.writeHead(413, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
  }
}
