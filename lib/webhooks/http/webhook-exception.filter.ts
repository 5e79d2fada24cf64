import {
  Catch,
  ForbiddenException,
  HttpException,
  Inject,
  Logger,
  Optional,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../../core/payments.runtime.js';
import { WebhookLogSampler } from '../../core/webhook-log.sampler.js';
import { servedRouteOf } from './payments-webhook-route.helper.js';
import { WebhookRejectionException } from './webhook-rejection.exception.js';
import { deliveryTelemetryOf } from '../../telemetry/delivery-telemetry.request.js';
import { notifyDeliveryListener } from '../contracts/payment-delivery-listener.util.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from '../contracts/payments-webhooks.constants.js';
import { webhooksLogger } from '../contracts/payments-webhooks.logger.js';

/**
 * Scoped to the webhook controller, so it runs before any global filter of the host app: refused
 * deliveries keep the status of the answer table (docs/webhooks.md) and a body of `{ received: false, error }`, and an
 * unexpected error answers a bare 500 (the service retries) without leaking its message.
 */
@Catch()
export class WebhookExceptionFilter implements ExceptionFilter {
  private readonly logger: Logger;
  /**
   * A refusal by the host app (a global guard, usually) is one line per window, then a count: every
   * delivery of a misconfigured app is refused alike, and anyone can send one.
   */
  private readonly hostRefusals: WebhookLogSampler;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(PAYMENTS_WEBHOOKS_OPTIONS) private readonly webhooks?: ResolvedWebhooksOptions,
    @Optional() private readonly appConfig?: ApplicationConfig,
    @Optional() @Inject(PAYMENTS_RUNTIME) runtime?: PaymentsRuntime,
  ) {
    this.logger = webhooksLogger(webhooks);
    this.hostRefusals = new WebhookLogSampler({
      write: (line) => this.logger.warn(line),
      now: () => (runtime ? runtime.now() : Date.now()),
      firstPerWindow: 1,
    });
  }

  /**
   * Says that the app, not the receiver, refused a delivery (`rejected`): it looks exactly like a wrong
   * secret from outside. Names the global guard when it can be known: a frame of the exception's stack
   * in one of the app's global guards (a guard that throws, e.g. Passport's `AuthGuard('jwt')` and its
   * subclasses), or the only global guard when Nest's own 403 says a guard returned false.
   */
  private hostRefused(exception: HttpException): void {
    const guards = globalGuardNamesOf(this.appConfig);
    const framed = [...(exception.stack ?? '').matchAll(/\bat (?:async )?(?:new )?([\w$]+)\.[\w$<>]+ /g)]
      .map((frame) => frame[1]!)
      .find((name) => guards.includes(name));
    const returnedFalse = exception instanceof ForbiddenException && exception.message === 'Forbidden resource';
    const guard = framed ?? (returnedFalse && guards.length === 1 ? guards[0] : undefined);
    const by = guard === undefined ? 'a guard or middleware of the app' : `the app's global guard ${guard}`;
    const route =
      this.webhooks?.path === undefined
        ? 'the payments webhook route'
        : `POST ${servedRouteOf(this.webhooks.path, this.appConfig)}`;
    this.hostRefusals.log(
      'rejected',
      `A delivery to ${route} was refused with ${exception.getStatus()} by ${by}, before the receiver checked its signature (answered {"received":false,"error":"rejected"}): deliveries carry no credentials of the app, only their signature. Let the route through first thing in that guard: if (isPaymentsWebhookRoute(context, reflector)) return true; (isPaymentsWebhookRoute from 'nestjs-payments')`,
    );
  }

  /** Tells the opt-in `webhooks.deliveryListener` of a refused delivery: status and reason only. */
  private rejected(status: number, reason: string): void {
    const listener = this.webhooks?.deliveryListener;
    if (listener?.onRejection) {
      notifyDeliveryListener(listener, 'onRejection', { status, reason, at: new Date() }, this.logger);
    }
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<unknown>();
    const adapter = this.adapterHost.httpAdapter;
    // Ends the delivery span the guard started (a no-op when the guard did not run).
    const telemetry = deliveryTelemetryOf(host.switchToHttp().getRequest<object>());
    if (exception instanceof WebhookRejectionException) {
      telemetry.rejected(exception.getStatus(), exception.reason);
      this.rejected(exception.getStatus(), exception.reason);
      adapter.reply(response, exception.getResponse(), exception.getStatus());
      return;
    }
    if (exception instanceof HttpException) {
      // Thrown by something of the host on this route (a global guard or pipe): keep its status.
      this.hostRefused(exception);
      telemetry.rejected(exception.getStatus(), 'rejected');
      this.rejected(exception.getStatus(), 'rejected');
      adapter.reply(response, { received: false, error: 'rejected' }, exception.getStatus());
      return;
    }
    this.logger.error(
      `Webhook delivery failed with 500 internal_error: ${exception instanceof Error ? `${exception.name}: ${exception.message}` : typeof exception}`,
      exception instanceof Error ? exception.stack : undefined,
    );
    telemetry.rejected(500, 'internal_error');
    this.rejected(500, 'internal_error');
    adapter.reply(response, { received: false, error: 'internal_error' }, 500);
  }
}

/** Class names of the app's global guards (`APP_GUARD` providers and `useGlobalGuards`). */
function globalGuardNamesOf(config: ApplicationConfig | undefined): string[] {
  if (config === undefined) return [];
  const names = [
    ...config.getGlobalGuards().map((guard) => (guard as object | undefined)?.constructor?.name),
    ...config.getGlobalRequestGuards().map((wrapper) => wrapper.metatype?.name),
  ];
  return names.filter((name): name is string => typeof name === 'string' && name !== '' && name !== 'Object');
}
