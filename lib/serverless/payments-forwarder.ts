import type { WebhookVerifier } from '../webhooks/contracts/webhook-verifier.interface.js';
import { fail, kind } from '../errors/payments-option.checks.js';
import {
  eventBody,
  eventHeaders,
  forwardedHeaders,
  jsonResult,
  type PaymentsForwardedDelivery,
  type ServerlessHttpEvent,
  type ServerlessHttpResult,
} from './serverless-http.event.js';

/** Publishes a forwarded delivery; resolves only once the broker confirmed it (a publisher confirm, a JetStream ack). */
export interface PaymentsDeliveryPublisher {
  publish(delivery: PaymentsForwardedDelivery): Promise<void>;
  /** Closes the publisher's connection. */
  close?(): Promise<void>;
}

/** What the forwarder logs: a `console`, a Nest `Logger`. Only a publish that failed is logged. */
export interface PaymentsForwarderLogger {
  error(message: string): void;
}

/** Options of `createPaymentsForwarder`. */
export interface PaymentsForwarderOptions {
  /** Where deliveries go: `rabbitMqPublisher(...)`, `natsPublisher(...)`, or your own. */
  publisher: PaymentsDeliveryPublisher;
  /**
   * The scheme of the service's signatures: when given (recommended), a delivery is verified here, its
   * timestamp judged on receipt, and a forged or stale one is answered 401 and never published. The
   * consumer verifies the bytes again either way.
   */
  verifier?: WebhookVerifier;
  /** Largest accepted body in bytes (413 above). Default 1048576 (1 MiB), as the receiver's. */
  maxBodyBytes?: number;
  /** Default `console`. */
  logger?: PaymentsForwarderLogger;
}

/** The forwarder's answer: an HTTP status and its body. */
export interface PaymentsForwardReceipt {
  status: number;
  body:
    | { received: true; outcome: 'forwarded' }
    | { received: false; error: 'invalid_signature' | 'payload_too_large' | 'broker_unavailable' };
}

/** A forwarder: a function handler of HTTP events, and `forward()` for any other caller (the Nest route). */
export interface PaymentsForwarder {
  (event: ServerlessHttpEvent): Promise<ServerlessHttpResult>;
  /** Checks and publishes one delivery; never rejects. */
  forward(delivery: {
    body: Buffer;
    headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  }): Promise<PaymentsForwardReceipt>;
}

const FORWARDED = Object.freeze({ received: true as const, outcome: 'forwarded' as const });

/**
 * The edge of a broker shape: takes the service's POST, checks its size (and its signature, with
 * `verifier`), publishes the bytes and the headers unchanged, and answers 200 only once the broker
 * confirmed the publish (503 otherwise, so the service retries). Shaped as a function handler (API Gateway,
 * function URL events); `forward()` serves any other caller, such as `PaymentsForwarderModule`'s route.
 * It loads no Nest and no broker client of its own: the publisher brings its client.
 *
 * @example
 * export const handler = createPaymentsForwarder({
 *   verifier: standardWebhooks({ secrets: process.env.PAYMENTS_WEBHOOK_SECRET! }),
 *   publisher: rabbitMqPublisher({ url: process.env.AMQP_URL!, queue: 'payments.webhooks' }),
 * });
 */
export function createPaymentsForwarder(options: PaymentsForwarderOptions): PaymentsForwarder {
  if (typeof options?.publisher?.publish !== 'function') {
    fail(
      'createPaymentsForwarder({ publisher })',
      'is missing',
      'pass rabbitMqPublisher(...), natsPublisher(...) or { publish }',
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    fail(
      'createPaymentsForwarder({ maxBodyBytes })',
      `must be a positive integer, got ${kind(maxBodyBytes)}`,
      'pass a number of bytes, e.g. 1048576',
    );
  }
  const { publisher, verifier } = options;
  const logger = options.logger ?? console;

  const forward: PaymentsForwarder['forward'] = async ({ body, headers }) => {
    if (body.length > maxBodyBytes) return { status: 413, body: { received: false, error: 'payload_too_large' } };
    const forwarded = forwardedHeaders(headers);
    if (verifier) {
      let valid: boolean;
      try {
        valid = (await verifier.verify({ rawBody: body, headers: forwarded })).valid;
      } catch {
        valid = false;
      }
      if (!valid) return { status: 401, body: { received: false, error: 'invalid_signature' } };
    }
    try {
      await publisher.publish({ body, headers: forwarded });
    } catch (error) {
      logger.error(
        `Payments forwarder: the broker did not confirm a delivery; answered 503 so that the service retries (${error instanceof Error ? `${error.name}: ${error.message}` : typeof error})`,
      );
      return { status: 503, body: { received: false, error: 'broker_unavailable' } };
    }
    return { status: 200, body: FORWARDED };
  };

  const handler = (async (event: ServerlessHttpEvent) => {
    const receipt = await forward({ body: eventBody(event), headers: eventHeaders(event) });
    return jsonResult(receipt.status, receipt.body);
  }) as PaymentsForwarder;
  handler.forward = forward;
  return handler;
}
