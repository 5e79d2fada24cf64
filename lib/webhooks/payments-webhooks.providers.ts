import {
  Inject,
  Injectable,
  Logger,
  type InjectionToken,
  type ModuleMetadata,
  type OnApplicationShutdown,
  type Provider,
  type Type,
} from '@nestjs/common';
import { DEFAULT_WEBHOOKS_PATH } from '../core/payments.defaults.js';
import { getPaymentsInstanceToken } from '../core/payments.instance.js';
import { PAYMENTS_RUNTIME, type PaymentsRuntime } from '../core/payments.runtime.js';
import { InlinePaymentEventsProcessor } from './dispatch/inline-payment-events.processor.js';
import { PaymentEventsMetadataAccessor } from './dispatch/payment-events-metadata.accessor.js';
import { PaymentEventsProcessor } from './contracts/payment-events-processor.interface.js';
import { PaymentEventsDispatcher } from './dispatch/payment-events.dispatcher.js';
import { PaymentEventsExplorer } from './dispatch/payment-events.explorer.js';
import { PaymentEventsRegistry } from './dispatch/payment-events.registry.js';
import { createPaymentsWebhookController } from './receiver/payments-webhook.controller.js';
import { PAYMENTS_WEBHOOKS_LOGGER } from './contracts/payments-webhooks.messages.js';
import {
  PAYMENT_EVENTS_DISPATCHER,
  PAYMENT_EVENTS_REGISTRY,
  PAYMENTS_WEBHOOKS_OPTIONS,
} from './contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from './contracts/payments-webhooks.options.js';
import { IdempotencyStore } from './contracts/idempotency-store.interface.js';
import {
  checkReceiverPlugins,
  createReceiverPluginsPart,
  receiverPluginsFor,
  type ReceiverPluginsNaming,
  type ReceiverPluginsSpec,
} from './payments-webhooks.plugins.js';
import type { PaymentsReceiverPlugin } from './contracts/payments-receiver-plugin.interface.js';
import { MemoryIdempotencyStore } from './stores/memory-idempotency.store.js';
import { validateWebhooksOptions } from './payments-webhooks.validator.js';
import { WebhookRawBodyReader } from './receiver/webhook-raw-body.reader.js';
import { WebhookDeliveryChecks } from './receiver/webhook-delivery.checks.js';
import { getPaymentsWebhookReceiverToken, PaymentsWebhookReceiver } from './receiver/payments-webhook.receiver.js';

/** `'/payments/webhooks/'` -> `'payments/webhooks'`; anything that is not a usable string -> the default. */
export function normaliseWebhooksPath(path: unknown): string {
  if (typeof path !== 'string') return DEFAULT_WEBHOOKS_PATH;
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? DEFAULT_WEBHOOKS_PATH : trimmed;
}

/** The store the options name, or a new `MemoryIdempotencyStore` that the instance owns (and closes). */
export function createIdempotencyStore(webhooks: ResolvedWebhooksOptions, runtime: PaymentsRuntime): IdempotencyStore {
  if (webhooks.store) return webhooks.store;
  return new MemoryIdempotencyStore({
    retentionSeconds: webhooks.retentionSeconds,
    now: runtime,
  });
}

/** Refuses every delivery: the verifier of a receiver whose factory turned webhooks off. */
const REFUSE_ALL = Object.freeze({ verify: () => ({ valid: false as const, reason: 'webhooks_disabled' }) });

/**
 * The receiver options of a route whose factory returned `webhooks: false` (forRootAsync with a static
 * route): the defaults, `disabled`, so that every delivery is answered 404.
 */
export function disabledReceiverOptions(path: string, instance: string): ResolvedWebhooksOptions {
  const defaults = validateWebhooksOptions(
    { path, verifier: REFUSE_ALL, allowMemoryStoreInProduction: true, reconcile: false },
    'sandbox',
    instance,
  ) as ResolvedWebhooksOptions;
  return Object.freeze({ ...defaults, disabled: true as const });
}

/** Closes the idempotency store on shutdown if the instance created it (a store passed in options belongs to the app). */
@Injectable()
export class IdempotencyStoreCloser implements OnApplicationShutdown {
  private readonly logger = new Logger(PAYMENTS_WEBHOOKS_LOGGER);

  constructor(
    @Inject(IdempotencyStore) private readonly store: IdempotencyStore,
    @Inject(PAYMENTS_WEBHOOKS_OPTIONS) private readonly webhooks: ResolvedWebhooksOptions,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.store === this.webhooks.store) return;
    try {
      await this.store.close?.();
    } catch (error) {
      this.logger.warn(
        `Could not close the idempotency store: ${error instanceof Error ? error.message : typeof error}`,
      );
    }
  }
}

/**
 * The token of the `PaymentEventsRegistry` of one module instance: the class for the unnamed
 * instance, a string for a named one.
 */
export function getPaymentEventsRegistryToken(name?: string): typeof PaymentEventsRegistry | string {
  return getPaymentsInstanceToken(PaymentEventsRegistry, name);
}

/** What the structure of the receiver depends on, known before any options factory runs. */
export interface PaymentsReceiverPartSpec {
  /** The instance name (`'default'` when unnamed). */
  name: string;
  /** The route (already normalised). */
  path: string;
  /** true: the queue part is registered (`processing: { queue }`); false: inline only. */
  queued: boolean;
  /** Whether the queue part runs a worker (`processing.queue.worker`); undefined: the options decide at boot. */
  worker?: boolean;
  /** Which plug-ins' providers are registered (the inbox: `transactions`; the reconciler and its watch list: `reconcile`). */
  plugins: ReceiverPluginsSpec;
  /** The app's own plug-ins (`plugins`), after the built-in ones. */
  own?: readonly PaymentsReceiverPlugin[];
  /** How a boot error names a plug-in the options turn on but `plugins` left out. */
  naming: ReceiverPluginsNaming;
  /** What the receiver's options factory injects, and how it maps that to the receiver options. */
  inject: InjectionToken[];
  resolve: (...dependencies: never[]) => ResolvedWebhooksOptions | false;
}

/**
 * The receiver's providers, registered only when the instance has a route: its controller (built for
 * the route), the receiver's checks of a delivery, raw-body reader, explorer, registry, dispatcher,
 * idempotency store and processor (inline, or the one a plug-in brings: the queue's), and what its
 * plug-ins bring (the built-in ones the declaration turns on, then the app's `plugins`). Exports the
 * registry, dispatcher, processor and store under their classes for the unnamed instance, a named one
 * its registry under `getPaymentEventsRegistryToken(name)`, and each plug-in's exports.
 */
export function createPaymentsReceiverPart(spec: PaymentsReceiverPartSpec): {
  imports: NonNullable<ModuleMetadata['imports']>;
  controllers: Type<unknown>[];
  providers: Provider[];
  exports: InjectionToken[];
} {
  const registryToken = getPaymentEventsRegistryToken(spec.name);
  const unnamed = registryToken === PaymentEventsRegistry;
  const plugins = createReceiverPluginsPart(
    receiverPluginsFor(spec.plugins, { name: spec.name, unnamed, queued: spec.queued, worker: spec.worker }, spec.own),
    spec.plugins,
  );
  // Inline unless a plug-in processes events itself (the queue: enqueued, then answered).
  const processor: Provider = {
    provide: PaymentEventsProcessor,
    useExisting: plugins.processor ?? InlinePaymentEventsProcessor,
  };
  const providers: Provider[] = [
    {
      provide: PAYMENTS_WEBHOOKS_OPTIONS,
      useFactory: (...dependencies: never[]): ResolvedWebhooksOptions => {
        const webhooks = spec.resolve(...dependencies);
        if (!webhooks) return disabledReceiverOptions(spec.path, spec.name);
        return checkReceiverPlugins(spec.plugins, webhooks, spec.naming);
      },
      inject: spec.inject,
    },
    {
      provide: IdempotencyStore,
      useFactory: createIdempotencyStore,
      inject: [PAYMENTS_WEBHOOKS_OPTIONS, PAYMENTS_RUNTIME],
    },
    IdempotencyStoreCloser,
    PaymentEventsMetadataAccessor,
    { provide: PAYMENT_EVENTS_REGISTRY, useClass: PaymentEventsRegistry },
    PaymentEventsExplorer,
    PaymentEventsDispatcher,
    { provide: PAYMENT_EVENTS_DISPATCHER, useExisting: PaymentEventsDispatcher },
    ...plugins.providers,
    InlinePaymentEventsProcessor,
    processor,
    WebhookDeliveryChecks,
    PaymentsWebhookReceiver,
    WebhookRawBodyReader,
  ];
  const receiverToken = getPaymentsWebhookReceiverToken(spec.name);
  const exports: InjectionToken[] = [
    ...(unnamed
      ? [
          PaymentEventsRegistry,
          PaymentEventsDispatcher,
          PaymentEventsProcessor,
          IdempotencyStore,
          PaymentsWebhookReceiver,
        ]
      : [registryToken, receiverToken]),
    ...plugins.exports,
  ];
  // The unnamed instance alone provides the class token: `app.get(PaymentEventsRegistry)` is never another instance's.
  providers.push({ provide: registryToken, useExisting: PAYMENT_EVENTS_REGISTRY });
  // The same for the receiver: a named instance's is `getPaymentsWebhookReceiverToken(name)`.
  if (receiverToken !== PaymentsWebhookReceiver)
    providers.push({ provide: receiverToken, useExisting: PaymentsWebhookReceiver });
  return {
    imports: plugins.imports,
    controllers: [createPaymentsWebhookController(spec.path)],
    providers,
    exports,
  };
}
