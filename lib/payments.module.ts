import { Inject, Module, type DynamicModule, type NestModule, type OnModuleInit, type Provider } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, HttpAdapterHost } from '@nestjs/core';
import { createPaymentsClientPart } from './client/payments-client.providers.js';
import {
  getPaymentsInstanceContextToken,
  isDefaultPaymentsInstance,
  PAYMENTS_INSTANCE_NAME,
  PAYMENTS_INSTANCE_DESCRIPTOR,
  type PaymentsInstanceContext,
  type PaymentsInstanceDescriptor,
} from './core/payments.instance.js';
import { PAYMENTS_RUNTIME } from './core/payments.runtime.js';
import { PaymentsTelemetry } from './telemetry/payments.telemetry.js';
import {
  PAYMENTS_ASYNC_OPTIONS_TYPE,
  PAYMENTS_MODULE_OPTIONS,
  PAYMENTS_OPTIONS_TYPE,
  PaymentsConfigurableModule,
} from './payments.module-definition.js';
import type { PaymentsModuleOptions } from './payments-options.interface.js';
import { resolvePaymentsOptions } from './payments-options.validator.js';
import { checkShape } from './payments-module.structure.js';
import {
  forRootDeclarationOf,
  receiverDeclarationOf,
  type ReceiverDeclaration,
} from './webhooks/payments-webhooks.declaration.js';
import { checkPaymentsInstances } from './payments-instances.check.js';
import { PAYMENTS_WEBHOOKS_PATH } from './webhooks/contracts/payments-webhooks.constants.js';
import { createPaymentsReceiverPart } from './webhooks/payments-webhooks.providers.js';
import {
  quietWebhookClientGoneOnFastify,
  type FastifyRouteHookHost,
} from './webhooks/receiver/fastify-client-gone.hook.js';

/**
 * The payments module: the API client (`PaymentsService`) and, unless `webhooks: false`, the webhook
 * receiver that routes verified events to `@OnPaymentEvent` handlers. Global by default.
 *
 * Composed of parts that each own their options, validation, tokens and providers: the client
 * (always) and the receiver (only when the instance has a route), with the receiver's plug-ins (the
 * queue in queued mode among them). Several instances may live in one app, each with its own `name`.
 *
 * @example
 * PaymentsModule.forRoot({ apiKey, environment: 'sandbox', baseUrl, webhooks: { verifier } })
 * PaymentsModule.forRoot({ name: 'eu', apiKey: euKey, environment: 'production', baseUrl: euUrl, webhooks: { path: 'payments/eu', verifier } })
 */
@Module({ imports: [DiscoveryModule] })
export class PaymentsModule extends PaymentsConfigurableModule implements NestModule, OnModuleInit {
  constructor(
    @Inject(PAYMENTS_WEBHOOKS_PATH) private readonly webhooksPath: string | false,
    @Inject(PAYMENTS_INSTANCE_DESCRIPTOR) private readonly instance: PaymentsInstanceDescriptor,
    private readonly adapterHost: HttpAdapterHost,
    private readonly discovery: DiscoveryService,
  ) {
    super();
  }

  /**
   * `forRoot`: the webhook route is `webhooks.path` (default 'payments/webhooks'); `webhooks: false`
   * registers none. Only the plug-ins the options turn on (`webhooks.transactions`, `webhooks.reconcile`,
   * a queue) have providers. `name` makes it a named instance.
   */
  static override forRoot(options: typeof PAYMENTS_OPTIONS_TYPE): DynamicModule {
    const declaration = forRootDeclarationOf(options);
    return compose(super.forRoot(options), declaration);
  }

  /**
   * `forRootAsync`: the receiver's structure must be known before the factory runs, so it is the static
   * `receiver` (`{ path, processing, worker, reconcile, transactions }`, default route
   * 'payments/webhooks'; `false` registers none, and the factory may then omit `webhooks`). The boot
   * fails if the factory's `webhooks.path` or `processing` says otherwise, or if it turns on a plug-in
   * (`webhooks.reconcile`, `webhooks.transactions`) the flags left out; if the factory returns
   * `webhooks: false` while a route is registered, that route answers 404. Without `processing` the
   * receiver is inline; without the flags, reconciliation's providers are registered and the inbox's are
   * not. `name` (static) makes it a named instance. `forRoot` is sugar: the same declaration, read from
   * `webhooks` (`receiverDeclarationOf`, payments-webhooks.declaration.ts).
   */
  static override forRootAsync(options: typeof PAYMENTS_ASYNC_OPTIONS_TYPE): DynamicModule {
    const declaration = receiverDeclarationOf(options, 'forRootAsync');
    return compose(super.forRootAsync(options), declaration);
  }

  /**
   * Refuses two instances with the same name, the same route or the same queue. (A handler bound to a
   * name no instance has is refused by the receiver's explorer, in its one walk of the providers.)
   */
  onModuleInit(): void {
    const others = this.discovery
      .getProviders()
      .filter(
        (wrapper) =>
          wrapper.token === PAYMENTS_INSTANCE_DESCRIPTOR && wrapper.instance && wrapper.instance !== this.instance,
      )
      .map((wrapper) => wrapper.instance as PaymentsInstanceDescriptor);
    checkPaymentsInstances(this.instance, others);
  }

  /**
   * Nest calls `configure()` before it registers routes: the one moment Fastify still takes an
   * `onRoute` hook, used to keep a client that goes away mid-body quiet (a route error handler, nothing
   * per request). No middleware is applied: on Express the webhook route reads the body itself when no
   * parser kept it (`bodyParser: false`), so a delivery pays for no extra Express layer.
   */
  configure(): void {
    if (this.webhooksPath === false) return;
    const adapter = this.adapterHost.httpAdapter?.getType();
    // Fastify reads the body itself; the module only keeps a client that goes away mid-body quiet.
    if (adapter === 'fastify')
      quietWebhookClientGoneOnFastify(
        this.adapterHost.httpAdapter.getInstance<FastifyRouteHookHost>(),
        this.webhooksPath,
      );
  }
}

/** Adds the parts of one instance to the definition `ConfigurableModuleBuilder` made. */
function compose(definition: DynamicModule, declaration: ReceiverDeclaration): DynamicModule {
  const { name, path } = declaration;
  // A receiver declared absent (`receiver: false`) need not be said absent again by the factory.
  const resolve = (raw: PaymentsModuleOptions) =>
    resolvePaymentsOptions(
      path === false && typeof raw === 'object' && raw !== null && raw.webhooks === undefined
        ? { ...raw, webhooks: false }
        : raw,
      name,
    );
  const client = createPaymentsClientPart(name, [PAYMENTS_MODULE_OPTIONS], resolve);
  const receiver =
    path === false
      ? undefined
      : createPaymentsReceiverPart({
          name,
          path,
          queued: declaration.queued,
          worker: declaration.worker,
          plugins: declaration.plugins,
          own: declaration.own,
          naming: declaration.naming.plugins,
          inject: [PAYMENTS_MODULE_OPTIONS],
          resolve: (raw: PaymentsModuleOptions) => resolve(raw).webhooks,
        });
  const core: Provider[] = [
    { provide: PAYMENTS_INSTANCE_NAME, useValue: name },
    { provide: PAYMENTS_WEBHOOKS_PATH, useValue: path },
    {
      provide: PAYMENTS_RUNTIME,
      useFactory: (raw: PaymentsModuleOptions) => resolve(raw).runtime,
      inject: [PAYMENTS_MODULE_OPTIONS],
    },
    {
      provide: PAYMENTS_INSTANCE_DESCRIPTOR,
      useFactory: (raw: PaymentsModuleOptions): PaymentsInstanceDescriptor => {
        const webhooks = resolve(raw).webhooks;
        checkShape(declaration, raw, webhooks !== false && webhooks.processing !== 'inline');
        const queue = webhooks && webhooks.processing !== 'inline' ? webhooks.processing.queue : undefined;
        // Two queues collide when both their BullMQ prefix and their name are equal.
        return { kind: 'module', name, path, queue: queue ? `${queue.prefix}:${queue.name}` : undefined };
      },
      inject: [PAYMENTS_MODULE_OPTIONS],
    },
    // What a receiver registered apart (PaymentsWebhooksModule) reads of this instance.
    {
      provide: getPaymentsInstanceContextToken(name),
      useFactory: (raw: PaymentsModuleOptions): PaymentsInstanceContext => ({
        name,
        environment: resolve(raw).environment,
        runtime: resolve(raw).runtime,
      }),
      inject: [PAYMENTS_MODULE_OPTIONS],
    },
    // Loads the optional @opentelemetry/api once at boot; a no-op telemetry when it is not installed.
    {
      provide: PaymentsTelemetry,
      useFactory: () => PaymentsTelemetry.load(isDefaultPaymentsInstance(name) ? undefined : name),
    },
  ];
  return {
    ...definition,
    imports: [...(definition.imports ?? []), ...(receiver ? receiver.imports : [])],
    controllers: [...(definition.controllers ?? []), ...(receiver ? receiver.controllers : [])],
    providers: [...(definition.providers ?? []), ...core, ...client.providers, ...(receiver ? receiver.providers : [])],
    exports: [
      ...(definition.exports ?? []),
      PAYMENTS_RUNTIME,
      PaymentsTelemetry,
      getPaymentsInstanceContextToken(name),
      ...client.exports,
      ...(receiver ? receiver.exports : []),
    ],
  };
}
