import { Logger } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { PAYMENTS_WEBHOOKS_LOGGER } from '../contracts/payments-webhooks.messages.js';

/** The part of a Fastify route's options this module touches (Fastify is not a dependency). */
interface FastifyRouteOptionsLike {
  method: string | string[];
  url: string;
  errorHandler?: (this: unknown, error: Error, request: { raw: IncomingMessage }, reply: unknown) => unknown;
}

/** The part of the Fastify instance this module uses: its `onRoute` hook. */
export interface FastifyRouteHookHost {
  addHook(name: 'onRoute', hook: (route: FastifyRouteOptionsLike) => void): unknown;
}

/**
 * Fastify only (the module calls it at boot, before the routes exist): Fastify reads the body itself,
 * and a client that disconnects mid-body makes it hand Node's `aborted` error to Nest's exception
 * handler, which would log it at error level with a stack. This gives the POST {path} route a
 * Fastify error handler of its own that marks that error as what it is, a client-side 400
 * (`expose: false`), and rethrows it to the app's handler (Nest's), which then answers it without an
 * error line; the going-away itself is logged at debug. It costs nothing on a delivery that goes
 * well: no middleware, no hook, no listener per request (it replaces a Nest middleware that
 * cost ~5 % of the CPU of every Fastify delivery).
 */
export function quietWebhookClientGoneOnFastify(instance: FastifyRouteHookHost, path: string): void {
  const logger = new Logger(PAYMENTS_WEBHOOKS_LOGGER);
  const route = `/${path}`;
  instance.addHook('onRoute', (options) => {
    const methods = Array.isArray(options.method) ? options.method : [options.method];
    // A global prefix (`app.setGlobalPrefix`) comes before the path.
    if (!methods.includes('POST') || !(options.url === route || options.url.endsWith(route))) return;
    const own = options.errorHandler;
    options.errorHandler = function webhookClientGone(this: unknown, error, request, reply) {
      const gone = error as Error & { code?: unknown };
      if (!request.raw.complete && (gone.code === 'ECONNRESET' || request.raw.destroyed)) {
        logger.debug(`Delivery ended by the client before its body (${gone.message})`);
        Object.assign(gone, { status: 400, statusCode: 400, expose: false });
      }
      if (own) return own.call(this, error, request, reply);
      // Fastify hands what an error handler throws to the next one: the app's (Nest's).
      throw error;
    };
  });
}
