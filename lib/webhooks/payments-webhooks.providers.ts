import type { Provider } from '@nestjs/common';
import { PaymentsConfigurationError } from '../errors/payments.errors.js';
import { DEFAULT_WEBHOOKS_PATH, PAYMENTS_RESOLVED_OPTIONS, PAYMENTS_RUNTIME, PAYMENTS_WEBHOOKS_PATH } from '../payments.constants.js';
import { PAYMENTS_MODULE_OPTIONS } from '../payments.module-definition.js';
import type { PaymentsModuleOptions, ResolvedPaymentsOptions } from '../payments-options.interface.js';
import type { PaymentsRuntime } from '../core/payments.runtime.js';
import { InlinePaymentEventsProcessor } from './inline-payment-events.processor.js';
import { PaymentEventsMetadataAccessor } from './payment-events-metadata.accessor.js';
import { PaymentEventsProcessor } from './payment-events-processor.interface.js';
import { PaymentEventsDispatcher } from './payment-events.dispatcher.js';
import { PaymentEventsExplorer } from './payment-events.explorer.js';
import { PaymentEventsRegistry } from './payment-events.registry.js';
import { PaymentEventsQueueProcessor } from './queue/payment-events-queue.processor.js';
import { PaymentEventsQueue } from './queue/payment-events.queue.js';
import { IdempotencyStore } from './stores/idempotency-store.interface.js';
import { MemoryIdempotencyStore } from './stores/memory-idempotency.store.js';
import { WebhookRawBodyMiddleware } from './webhook-raw-body.middleware.js';
import { WebhookSignatureGuard } from './webhook-signature.guard.js';

/** Token of a boot-time check that the static route and the factory's `webhooks.path` agree. */
export const PAYMENTS_WEBHOOKS_ROUTE_CHECK = Symbol('PAYMENTS_WEBHOOKS_ROUTE_CHECK');

/** `'/payments/webhooks/'` -> `'payments/webhooks'`; anything that is not a usable string -> the default. */
export function normaliseWebhooksPath(path: unknown): string {
  if (typeof path !== 'string') return DEFAULT_WEBHOOKS_PATH;
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? DEFAULT_WEBHOOKS_PATH : trimmed;
}

/**
 * The route `forRoot` registers: `webhooks.path` (default 'payments/webhooks'), or none with
 * `webhooks: false`. Bad values are reported at boot by the validator.
 */
export function webhooksPathOf(options: PaymentsModuleOptions): string | false {
  const webhooks = (options as { webhooks?: unknown }).webhooks;
  if (webhooks === false) return false;
  const path = typeof webhooks === 'object' && webhooks !== null ? (webhooks as { path?: unknown }).path : undefined;
  return normaliseWebhooksPath(path);
}

/**
 * Routes are registered before an async options factory runs, so `forRootAsync` takes the path as the
 * static `webhooksPath`. This fails the boot when the factory's options ask for another path.
 */
export function checkWebhooksRoute(staticPath: string | false, raw: PaymentsModuleOptions): true {
  const webhooks = (raw as { webhooks?: unknown }).webhooks;
  if (typeof webhooks !== 'object' || webhooks === null) return true;
  const requested = (webhooks as { path?: unknown }).path;
  if (requested === undefined) return true;
  const path = normaliseWebhooksPath(requested);
  if (staticPath === false) {
    throw new PaymentsConfigurationError(
      'webhooksPath',
      `is false (no route), but the options factory sets webhooks.path '${path}'`,
      `pass PaymentsModule.forRootAsync({ webhooksPath: '${path}', ... }): routes are registered before the factory runs`,
    );
  }
  if (path !== staticPath) {
    throw new PaymentsConfigurationError(
      'webhooksPath',
      `is '${staticPath}', but the options factory sets webhooks.path '${path}'`,
      `pass PaymentsModule.forRootAsync({ webhooksPath: '${path}', ... }) (routes are registered before the factory runs), or drop webhooks.path from the factory`,
    );
  }
  return true;
}

/** The store the options name, or a new `MemoryIdempotencyStore` that the module owns (and closes). */
export function createIdempotencyStore(options: ResolvedPaymentsOptions, runtime: PaymentsRuntime): IdempotencyStore {
  const webhooks = options.webhooks;
  if (webhooks && webhooks.store) return webhooks.store;
  return new MemoryIdempotencyStore({ retentionSeconds: webhooks ? webhooks.retentionSeconds : undefined, now: runtime });
}

/** Everything the webhook receiver needs besides its controller and middleware. */
export function createWebhookProviders(staticPath: string | false): Provider[] {
  return [
    { provide: PAYMENTS_WEBHOOKS_PATH, useValue: staticPath },
    {
      provide: PAYMENTS_WEBHOOKS_ROUTE_CHECK,
      useFactory: (raw: PaymentsModuleOptions) => checkWebhooksRoute(staticPath, raw),
      inject: [PAYMENTS_MODULE_OPTIONS],
    },
    {
      provide: IdempotencyStore,
      useFactory: createIdempotencyStore,
      inject: [PAYMENTS_RESOLVED_OPTIONS, PAYMENTS_RUNTIME],
    },
    PaymentEventsMetadataAccessor,
    PaymentEventsRegistry,
    PaymentEventsExplorer,
    PaymentEventsDispatcher,
    InlinePaymentEventsProcessor,
    PaymentEventsQueue,
    PaymentEventsQueueProcessor,
    {
      provide: PaymentEventsProcessor,
      useFactory: (options: ResolvedPaymentsOptions, inline: InlinePaymentEventsProcessor, queued: PaymentEventsQueueProcessor) =>
        options.webhooks && options.webhooks.processing !== 'inline' ? queued : inline,
      inject: [PAYMENTS_RESOLVED_OPTIONS, InlinePaymentEventsProcessor, PaymentEventsQueueProcessor],
    },
    WebhookSignatureGuard,
    WebhookRawBodyMiddleware,
  ];
}
