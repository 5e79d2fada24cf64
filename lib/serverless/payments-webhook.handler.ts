import { Logger, type DynamicModule, type INestApplicationContext, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  getPaymentsWebhookReceiverToken,
  type PaymentsWebhookReceiver,
} from '../webhooks/receiver/payments-webhook.receiver.js';
import {
  eventBody,
  eventHeaders,
  jsonResult,
  receiptResult,
  type ServerlessHttpEvent,
  type ServerlessHttpResult,
} from './serverless-http.event.js';

/** What `NestFactory.createApplicationContext` takes (`logger`, `bufferLogs`, ...). */
export type PaymentsApplicationContextOptions = NonNullable<Parameters<typeof NestFactory.createApplicationContext>[1]>;

/** Options of `createPaymentsWebhookHandler`. */
export interface PaymentsWebhookHandlerOptions {
  /** The function's root module: it imports `PaymentsModule` (or `PaymentsWebhooksModule`) with `webhooks`, and the handlers. */
  module: Type<unknown> | DynamicModule;
  /** The `PaymentsModule` instance whose receiver answers (`forRoot({ name })`). Default: the unnamed one. */
  instance?: string;
  /** Options of `NestFactory.createApplicationContext` (`logger`, `bufferLogs`, ...). */
  contextOptions?: PaymentsApplicationContextOptions;
}

/** A function handler over one Nest application context. */
export interface PaymentsWebhookHandler {
  /** Answers one HTTP event: the receiver's receipt as the function's result. Never rejects. */
  (event: ServerlessHttpEvent): Promise<ServerlessHttpResult>;
  /** The application context, created on the first call and reused by every later one (call it at init to warm up). */
  context(): Promise<INestApplicationContext>;
  /** Closes the context (tests, a graceful end); the next call creates a new one. */
  close(): Promise<void>;
}

const logger = new Logger('PaymentsServerless');

/**
 * Nest in a function: a handler for a function platform's HTTP event (API Gateway REST and HTTP APIs,
 * function URLs: base64 bodies, lower-cased or mixed-case headers) that hands the body's bytes and the
 * headers to the instance's `PaymentsWebhookReceiver` and returns its receipt (status and body of the
 * answer table). One application context (`NestFactory.createApplicationContext`: no HTTP server) per
 * instance of the function, created on the first event and reused while the instance lives; a context
 * that failed to start answers 503 (the service retries) and is tried again on the next event.
 *
 * @example
 * // handler.ts, the function's entry
 * export const handler = createPaymentsWebhookHandler({ module: AppModule });
 */
export function createPaymentsWebhookHandler(options: PaymentsWebhookHandlerOptions): PaymentsWebhookHandler {
  const token = getPaymentsWebhookReceiverToken(options.instance);
  let started: Promise<{ app: INestApplicationContext; receiver: PaymentsWebhookReceiver }> | undefined;

  const start = (): Promise<{ app: INestApplicationContext; receiver: PaymentsWebhookReceiver }> => {
    started ??= (async () => {
      // abortOnError false: a context that cannot start rejects (answered 503) instead of ending the process.
      const app = await NestFactory.createApplicationContext(options.module, {
        abortOnError: false,
        ...options.contextOptions,
      });
      try {
        return { app, receiver: app.get<PaymentsWebhookReceiver>(token, { strict: false }) };
      } catch (error) {
        await app.close();
        throw error;
      }
    })();
    // A failed start is not kept: the next event tries again.
    started.catch(() => (started = undefined));
    return started;
  };

  const handler = (async (event: ServerlessHttpEvent): Promise<ServerlessHttpResult> => {
    let receiver: PaymentsWebhookReceiver;
    try {
      receiver = (await start()).receiver;
    } catch (error) {
      logger.error(
        `The application context did not start; answered 503 so that the service retries: ${error instanceof Error ? `${error.name}: ${error.message}` : typeof error}`,
      );
      return jsonResult(503, { received: false, error: 'internal_error' });
    }
    const receipt = await receiver.receive({ body: eventBody(event), headers: eventHeaders(event) });
    return receiptResult(receipt);
  }) as PaymentsWebhookHandler;
  handler.context = async () => (await start()).app;
  handler.close = async () => {
    const current = started;
    started = undefined;
    if (current) await (await current).app.close();
  };
  return handler;
}
