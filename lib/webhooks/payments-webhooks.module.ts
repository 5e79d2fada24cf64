import {
  Inject,
  Module,
  type DynamicModule,
  type InjectionToken,
  type ModuleMetadata,
  type NestModule,
  type OptionalFactoryDependency,
  type Provider,
} from '@nestjs/common';
import { DiscoveryModule, HttpAdapterHost } from '@nestjs/core';
import { getPaymentsServiceToken, PAYMENTS_CLIENT } from '../client/payments-client.tokens.js';
import { PaymentsService } from '../client/payments.service.js';
import { DEFAULT_PAYMENTS_INSTANCE } from '../core/payments.defaults.js';
import {
  getPaymentsInstanceContextToken,
  isDefaultPaymentsInstance,
  PAYMENTS_INSTANCE_DESCRIPTOR,
  PAYMENTS_INSTANCE_NAME,
  PAYMENTS_INSTANCE_NAME_PATTERN,
  type PaymentsInstanceContext,
  type PaymentsInstanceDescriptor,
} from '../core/payments.instance.js';
import { PAYMENTS_RUNTIME } from '../core/payments.runtime.js';
import { fail, isObject, kind } from '../errors/payments-option.checks.js';
import { PaymentsTelemetry } from '../telemetry/payments.telemetry.js';
import { PAYMENTS_WEBHOOKS_OPTIONS, PAYMENTS_WEBHOOKS_PATH } from './contracts/payments-webhooks.constants.js';
import type { PaymentsWebhooksOptions, ResolvedWebhooksOptions } from './contracts/payments-webhooks.options.js';
import type { PaymentsQueueOptions } from './contracts/payments-queue.options.js';
import { quietWebhookClientGoneOnFastify, type FastifyRouteHookHost } from './http/fastify-client-gone.hook.js';
import { createPaymentsReceiverPart, normaliseWebhooksPath } from './payments-webhooks.providers.js';
import { validateWebhooksOptions } from './payments-webhooks.validator.js';

/**
 * The structure of a receiver, declared where it is registered (as `@nestjs/bullmq` declares a queue in
 * `registerQueue`): Nest knows it before any options factory runs, and no factory can change it.
 */
export interface PaymentsWebhooksRegistration {
  /** The `PaymentsModule` instance the receiver belongs to (`forRoot({ name })`). Default: the unnamed one. */
  name?: string;
  /** The route. Default 'payments/webhooks'. */
  path?: string;
  /** `'inline'` (default): handlers run before the answer. `'queue'`: BullMQ; the values then give `queue`. */
  processing?: 'inline' | 'queue';
  /** With `processing: 'queue'`: whether this process runs a worker (an app may only enqueue). Default true. */
  worker?: boolean;
  /** Register globally, so its registry, store and queue can be injected anywhere. Default true. */
  isGlobal?: boolean;
}

/** The values of a receiver: every option of `PaymentsWebhooksOptions` but the structure (route, processing). */
export type PaymentsWebhooksValues = Omit<PaymentsWebhooksOptions, 'path' | 'processing'> & {
  /** With `processing: 'queue'` (and only then): the BullMQ queue. */
  queue?: Omit<PaymentsQueueOptions, 'worker'>;
};

/** Options of `PaymentsWebhooksModule.register`: the structure and the values in one object. */
export type PaymentsWebhooksModuleOptions = PaymentsWebhooksRegistration & PaymentsWebhooksValues;

/** Options of `PaymentsWebhooksModule.registerAsync`: the structure, and a factory of the values. */
export interface PaymentsWebhooksModuleAsyncOptions extends PaymentsWebhooksRegistration {
  imports?: ModuleMetadata['imports'];
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  useFactory: (...args: never[]) => PaymentsWebhooksValues | Promise<PaymentsWebhooksValues>;
}

/** Token of the values of one registration (local to its module). */
const PAYMENTS_WEBHOOKS_VALUES = Symbol('PAYMENTS_WEBHOOKS_VALUES');

const STRUCTURE_KEYS = ['name', 'path', 'processing', 'worker', 'isGlobal'] as const;

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
    return build(registrationOf(options), { provide: PAYMENTS_WEBHOOKS_VALUES, useValue: values });
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
    const module = build(registrationOf(options), {
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

/** The registration with its defaults, checked at once (a bad structure fails before Nest builds anything). */
function registrationOf(
  options: PaymentsWebhooksRegistration,
): Required<Omit<PaymentsWebhooksRegistration, 'isGlobal'>> & { isGlobal: boolean } {
  const name = options.name ?? DEFAULT_PAYMENTS_INSTANCE;
  if (typeof name !== 'string' || !PAYMENTS_INSTANCE_NAME_PATTERN.test(name)) {
    fail(
      'PaymentsWebhooksModule name',
      'must be 1 to 64 letters, digits, "-" or "_"',
      'pass the name of the PaymentsModule instance, or omit it',
    );
  }
  if (
    options.path !== undefined &&
    (typeof options.path !== 'string' || normaliseWebhooksPath(options.path) !== options.path.replace(/^\/+|\/+$/g, ''))
  ) {
    fail('PaymentsWebhooksModule path', 'must be a non-empty string', "pass a route such as 'payments/webhooks'");
  }
  const processing = options.processing ?? 'inline';
  if (processing !== 'inline' && processing !== 'queue') {
    fail(
      'PaymentsWebhooksModule processing',
      "must be 'inline' or 'queue'",
      "pass 'queue' to answer once enqueued (BullMQ), or omit it",
    );
  }
  return {
    name,
    path: normaliseWebhooksPath(options.path),
    processing,
    worker: options.worker !== false,
    isGlobal: options.isGlobal !== false,
  };
}

/** The receiver options of `values` under the declared structure: the structure is never read from the values. */
function webhooksOptionsOf(registration: ReturnType<typeof registrationOf>, values: unknown): Record<string, unknown> {
  if (!isObject(values)) {
    return fail(
      'PaymentsWebhooksModule values',
      `must be an object, got ${kind(values)}`,
      'return { verifier, ... } from useFactory',
    );
  }
  for (const key of ['path', 'processing'] as const) {
    if (values[key] !== undefined) {
      fail(
        `PaymentsWebhooksModule values.${key}`,
        'is structure, not a value: a factory cannot change it',
        `declare it in PaymentsWebhooksModule.register[Async]({ ${key} }) and drop it from the values`,
      );
    }
  }
  const { queue, ...rest } = values;
  if (registration.processing === 'queue' && queue === undefined) {
    fail(
      'PaymentsWebhooksModule values.queue',
      "is missing while processing is 'queue'",
      'return { queue: { connection } } from the values, or register with processing: inline',
    );
  }
  if (registration.processing === 'inline' && queue !== undefined) {
    fail(
      'PaymentsWebhooksModule values.queue',
      "is set while processing is 'inline'",
      "register with processing: 'queue' to use it, or drop it",
    );
  }
  return {
    ...rest,
    path: registration.path,
    processing:
      registration.processing === 'queue' ? { queue: { ...(queue as object), worker: registration.worker } } : 'inline',
  };
}

function build(registration: ReturnType<typeof registrationOf>, values: Provider): DynamicModule {
  const { name, path } = registration;
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
    queued: registration.processing === 'queue',
    worker: registration.worker,
    inject: [PAYMENTS_WEBHOOKS_VALUES, { token: contextToken, optional: true } as unknown as InjectionToken],
    resolve: (raw: unknown, found: PaymentsInstanceContext | undefined): ResolvedWebhooksOptions =>
      validateWebhooksOptions(
        webhooksOptionsOf(registration, raw),
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
    global: registration.isGlobal,
    imports: [DiscoveryModule],
    controllers: receiver.controllers,
    providers,
    exports: receiver.exports,
  };
}
