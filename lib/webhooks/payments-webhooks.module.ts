import {
  Inject,
  Module,
  type DynamicModule,
  type InjectionToken,
  type NestModule,
  type Provider,
} from '@nestjs/common';
import { DiscoveryModule, HttpAdapterHost } from '@nestjs/core';
import { getPaymentsServiceToken, PAYMENTS_CLIENT } from '../client/payments-client.tokens.js';
import { PaymentsService } from '../client/payments.service.js';
import {
  getPaymentsInstanceContextToken,
  isDefaultPaymentsInstance,
  PAYMENTS_INSTANCE_DESCRIPTOR,
  PAYMENTS_INSTANCE_NAME,
  type PaymentsInstanceContext,
  type PaymentsInstanceDescriptor,
} from '../core/payments.instance.js';
import { PAYMENTS_RUNTIME } from '../core/payments.runtime.js';
import { fail, isObject, kind } from '../errors/payments-option.checks.js';
import { PaymentsTelemetry } from '../telemetry/payments.telemetry.js';
import { PAYMENTS_WEBHOOKS_OPTIONS, PAYMENTS_WEBHOOKS_PATH } from './contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from './contracts/payments-webhooks.options.js';
import { quietWebhookClientGoneOnFastify, type FastifyRouteHookHost } from './receiver/fastify-client-gone.hook.js';
import { createPaymentsReceiverPart } from './payments-webhooks.providers.js';
import {
  receiverDeclarationOf,
  registerDeclarationOf,
  type ReceiverDeclaration,
} from './payments-webhooks.declaration.js';
import {
  STRUCTURE_KEYS,
  webhooksOptionsOf,
  type PaymentsWebhooksModuleAsyncOptions,
  type PaymentsWebhooksModuleOptions,
} from './payments-webhooks.registration.js';
import { validateWebhooksOptions } from './payments-webhooks.validator.js';

export type {
  PaymentsWebhooksModuleAsyncOptions,
  PaymentsWebhooksModuleOptions,
  PaymentsWebhooksRegistration,
  PaymentsWebhooksValues,
} from './payments-webhooks.registration.js';

/** Token of the values of one registration (local to its module). */
const PAYMENTS_WEBHOOKS_VALUES = Symbol('PAYMENTS_WEBHOOKS_VALUES');

/**
 * The webhook receiver of one `PaymentsModule` instance, registered on its own: its route, signature
 * checks, handler discovery, dispatcher, idempotency store and processor (and queue). Use it when the
 * structure (route, inline or queued) is fixed in code while the values (verifier, secrets, store) come
 * from configuration; `PaymentsModule.forRoot({ webhooks })` builds the same receiver in one call.
 * The instance's `PaymentsModule` is registered with `webhooks: false`.
 *
 * @example
 * imports: [
 *   PaymentsModule.forRootAsync({ inject: [ConfigService], receiver: false, useFactory: (c) => client(c) }),
 *   PaymentsWebhooksModule.registerAsync({
 *     path: 'payments/webhooks',
 *     inject: [ConfigService],
 *     useFactory: (c: ConfigService) => ({ verifier: standardWebhooks({ secrets: c.get('PAYMENTS_WEBHOOK_SECRET') }) }),
 *   }),
 * ]
 */
@Module({})
export class PaymentsWebhooksModule implements NestModule {
  constructor(
    @Inject(PAYMENTS_WEBHOOKS_PATH) private readonly path: string,
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** A receiver whose values are known now. */
  static register(options: PaymentsWebhooksModuleOptions): DynamicModule {
    if (!isObject(options))
      fail(
        'PaymentsWebhooksModule.register(options)',
        `must be an object, got ${kind(options)}`,
        'pass { path, verifier, ... }',
      );
    const values: Record<string, unknown> = { ...options };
    for (const key of STRUCTURE_KEYS) delete values[key];
    return build(registerDeclarationOf(options), options.isGlobal, {
      provide: PAYMENTS_WEBHOOKS_VALUES,
      useValue: values,
    });
  }

  /** A receiver whose values a factory supplies (configuration, secrets); the structure stays static. */
  static registerAsync(options: PaymentsWebhooksModuleAsyncOptions): DynamicModule {
    if (!isObject(options) || typeof options.useFactory !== 'function') {
      fail(
        'PaymentsWebhooksModule.registerAsync(options)',
        'needs a useFactory',
        'pass { path, inject, useFactory: (...) => ({ verifier, ... }) }',
      );
    }
    const module = build(receiverDeclarationOf(options, 'register'), options.isGlobal, {
      provide: PAYMENTS_WEBHOOKS_VALUES,
      useFactory: options.useFactory,
      inject: options.inject ?? [],
    });
    return { ...module, imports: [...(module.imports ?? []), ...(options.imports ?? [])] };
  }

  /** Before routes are registered, Fastify's `onRoute` hook keeps a client gone mid-body quiet (as `PaymentsModule.configure`). */
  configure(): void {
    if (this.adapterHost.httpAdapter?.getType() === 'fastify') {
      quietWebhookClientGoneOnFastify(this.adapterHost.httpAdapter.getInstance<FastifyRouteHookHost>(), this.path);
    }
  }
}

/** The module of one receiver, from its declaration (`receiverDeclarationOf`) and the provider of its values. */
function build(declaration: ReceiverDeclaration, isGlobal: boolean | undefined, values: Provider): DynamicModule {
  const { name } = declaration;
  // The form of PaymentsWebhooksModule has no `false`: a receiver is what it registers.
  const path = declaration.path as string;
  const contextToken = getPaymentsInstanceContextToken(name);
  const context = (found: PaymentsInstanceContext | undefined): PaymentsInstanceContext =>
    found ??
    fail(
      'PaymentsWebhooksModule',
      `has no PaymentsModule instance${isDefaultPaymentsInstance(name) ? '' : ` named '${name}'`} to belong to`,
      `import PaymentsModule.forRoot({ ${isDefaultPaymentsInstance(name) ? '' : `name: '${name}', `}..., webhooks: false }) (global, the default) beside it`,
    );
  const receiver = createPaymentsReceiverPart({
    name,
    path,
    queued: declaration.queued,
    worker: declaration.worker !== false,
    plugins: declaration.plugins,
    own: declaration.own,
    naming: declaration.naming.plugins,
    inject: [PAYMENTS_WEBHOOKS_VALUES, { token: contextToken, optional: true } as unknown as InjectionToken],
    resolve: (raw: unknown, found: PaymentsInstanceContext | undefined): ResolvedWebhooksOptions =>
      validateWebhooksOptions(
        webhooksOptionsOf(declaration, raw),
        context(found).environment,
        name,
      ) as ResolvedWebhooksOptions,
  });
  const providers: Provider[] = [
    values,
    { provide: PAYMENTS_INSTANCE_NAME, useValue: name },
    { provide: PAYMENTS_WEBHOOKS_PATH, useValue: path },
    {
      provide: PAYMENTS_RUNTIME,
      useFactory: (found?: PaymentsInstanceContext) => context(found).runtime,
      inject: [{ token: contextToken, optional: true }],
    },
    {
      provide: PaymentsTelemetry,
      useFactory: () => PaymentsTelemetry.load(isDefaultPaymentsInstance(name) ? undefined : name),
    },
    {
      // The instance's client, for ctx.retrieveIntent(); missing only when its PaymentsModule is.
      provide: PAYMENTS_CLIENT,
      useFactory: (client: PaymentsService | undefined, found?: PaymentsInstanceContext) => {
        context(found);
        return client;
      },
      inject: [
        { token: isDefaultPaymentsInstance(name) ? PaymentsService : getPaymentsServiceToken(name), optional: true },
        { token: contextToken, optional: true },
      ],
    },
    {
      provide: PAYMENTS_INSTANCE_DESCRIPTOR,
      useFactory: (webhooks: ResolvedWebhooksOptions): PaymentsInstanceDescriptor => {
        const queue = webhooks.processing !== 'inline' ? webhooks.processing.queue : undefined;
        return { kind: 'receiver', name, path, queue: queue ? `${queue.prefix}:${queue.name}` : undefined };
      },
      inject: [PAYMENTS_WEBHOOKS_OPTIONS],
    },
    ...receiver.providers,
  ];
  return {
    module: PaymentsWebhooksModule,
    global: isGlobal !== false,
    imports: [DiscoveryModule, ...receiver.imports],
    controllers: receiver.controllers,
    providers,
    exports: receiver.exports,
  };
}
