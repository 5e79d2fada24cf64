import { ForbiddenException, HttpException, type Logger } from '@nestjs/common';
import type { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import type { PaymentsRuntime } from '../../core/payments.runtime.js';
import { WebhookLogSampler } from '../log/webhook-log.sampler.js';
import type { PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import { AnswerHooks } from './answer.hooks.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { webhooksLogger } from '../log/receiver.logger.js';
import type { PaymentsDeliveryTelemetry } from '../../telemetry/payments.telemetry.js';
import { servedRouteOf } from './served-route.js';
import { WebhookRejectionException } from './webhook-rejection.exception.js';

/**
 * How the route's exception filter ends a delivery the receiver never saw: what was thrown before the
 * route ran (a global guard or pipe of the host app), or while the route wrote its answer. Its answer, the
 * end of its span when one was started, and the plug-ins' `afterAnswer` (the delivery listener's `onRejection`). Every
 * delivery the route hands to `PaymentsWebhookReceiver` ends there instead.
 */
export class WebhookDeliveryOutcome {
  private readonly logger: Logger;
  /**
   * A refusal by the host app (a global guard, usually) is one line per window, then a count: every
   * delivery of a misconfigured app is refused alike, and anyone can send one.
   */
  private readonly hostRefusals: WebhookLogSampler;
  /** The plug-ins told of a refusal (the delivery listener's `onRejection`, among others). */
  private readonly answers: AnswerHooks;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly webhooks: ResolvedWebhooksOptions | undefined,
    private readonly appConfig: ApplicationConfig | undefined,
    runtime: PaymentsRuntime | undefined,
    plugins?: readonly PaymentsDispatchPlugin[],
  ) {
    this.logger = webhooksLogger(webhooks);
    this.answers = new AnswerHooks(plugins, this.logger);
    this.hostRefusals = new WebhookLogSampler({
      write: (line) => this.logger.warn(line),
      now: () => (runtime ? runtime.now() : Date.now()),
      firstPerWindow: 1,
    });
  }

  /**
   * A delivery that ends in an error: a refusal of the receiver keeps its status and reason, an
   * `HttpException` of the host app (a global guard or pipe on this route) its status with the reason
   * `rejected`, anything else is a bare 500 `internal_error` (the service retries) that leaks no message.
   * Ends the span (`telemetry`), tells the plug-ins (`afterAnswer`), writes `{ received: false, error }`.
   */
  failed(response: unknown, exception: unknown, telemetry: PaymentsDeliveryTelemetry): void {
    if (exception instanceof WebhookRejectionException) {
      this.refused(response, telemetry, exception.getStatus(), exception.reason, exception.getResponse());
      return;
    }
    if (exception instanceof HttpException) {
      this.hostRefused(exception);
      this.refused(response, telemetry, exception.getStatus(), 'rejected', { received: false, error: 'rejected' });
      return;
    }
    this.logger.error(
      `Webhook delivery failed with 500 internal_error: ${exception instanceof Error ? `${exception.name}: ${exception.message}` : typeof exception}`,
      exception instanceof Error ? exception.stack : undefined,
    );
    this.refused(response, telemetry, 500, 'internal_error', { received: false, error: 'internal_error' });
  }

  private refused(
    response: unknown,
    telemetry: PaymentsDeliveryTelemetry,
    status: number,
    reason: string,
    body: unknown,
  ): void {
    telemetry.rejected(status, reason);
    if (this.answers.listening) this.answers.tell({ kind: 'refused', record: { status, reason, at: new Date() } });
    this.adapterHost.httpAdapter.reply(response, body, status);
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
