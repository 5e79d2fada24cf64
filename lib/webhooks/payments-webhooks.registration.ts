import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';
import { DEFAULT_PAYMENTS_INSTANCE } from '../core/payments.defaults.js';
import { PAYMENTS_INSTANCE_NAME_PATTERN } from '../core/payments.instance.js';
import { fail, isObject, kind } from '../errors/payments-option.checks.js';
import type { PaymentsReceiverPlugin } from './contracts/payments-receiver-plugin.interface.js';
import type { PaymentsQueueOptions } from './contracts/payments-queue.options.js';
import type { PaymentsReceiverPlugins, PaymentsWebhooksOptions } from './contracts/payments-webhooks.options.js';
import type { ReceiverPluginName, ReceiverPluginsNaming } from './payments-webhooks.plugins.js';
import { normaliseWebhooksPath } from './payments-webhooks.providers.js';

/*
 * What `PaymentsWebhooksModule.register[Async]` is given: the structure of a receiver (instance, route,
 * processing, plug-ins) and its values, each checked before Nest builds anything.
 */

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
  /** The app's own plug-ins (`PaymentsReceiverPlugin` objects), after the built-in ones. */
  plugins?: readonly PaymentsReceiverPlugin[];
}

/** The values of a receiver: every option of `PaymentsWebhooksOptions` but the structure (route, processing). */
export type PaymentsWebhooksValues = Omit<PaymentsWebhooksOptions, 'path' | 'processing'> & {
  /** With `processing: 'queue'` (and only then): the BullMQ queue. */
  queue?: Omit<PaymentsQueueOptions, 'worker'>;
};

/** Options of `PaymentsWebhooksModule.register`: the structure and the values in one object. */
export type PaymentsWebhooksModuleOptions = PaymentsWebhooksRegistration & PaymentsWebhooksValues;

/**
 * Options of `PaymentsWebhooksModule.registerAsync`: the structure (with the plug-ins the values may turn
 * on: `reconcile`, `transactions`; giving neither is deprecated, see `PaymentsReceiverPlugins`), and a
 * factory of the values.
 */
export interface PaymentsWebhooksModuleAsyncOptions extends PaymentsWebhooksRegistration, PaymentsReceiverPlugins {
  imports?: ModuleMetadata['imports'];
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  useFactory: (...args: never[]) => PaymentsWebhooksValues | Promise<PaymentsWebhooksValues>;
}

/** The keys of `register(options)` that are structure; the rest are values. */
export const STRUCTURE_KEYS = ['name', 'path', 'processing', 'worker', 'isGlobal', 'plugins'] as const;

/** How `registerAsync`'s errors name a plug-in flag. */
export const PLUGINS_NAMING: ReceiverPluginsNaming = {
  option: (name: ReceiverPluginName) => `PaymentsWebhooksModule ${name}`,
  value: (name: ReceiverPluginName) => `values.${name}`,
  fix: (name: ReceiverPluginName) =>
    `pass PaymentsWebhooksModule.registerAsync({ ..., ${name}: true }), or drop ${name} from the values`,
};

/** The registration with its defaults, checked at once (a bad structure fails before Nest builds anything). */
export function registrationOf(options: PaymentsWebhooksRegistration): Required<
  Omit<PaymentsWebhooksRegistration, 'isGlobal' | 'plugins'>
> & {
  isGlobal: boolean;
  plugins: readonly PaymentsReceiverPlugin[] | undefined;
} {
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
    plugins: options.plugins,
  };
}

/** The receiver options of `values` under the declared structure: the structure is never read from the values. */
export function webhooksOptionsOf(
  registration: ReturnType<typeof registrationOf>,
  values: unknown,
): Record<string, unknown> {
  if (!isObject(values)) {
    return fail(
      'PaymentsWebhooksModule values',
      `must be an object, got ${kind(values)}`,
      'return { verifier, ... } from useFactory',
    );
  }
  for (const key of ['path', 'processing', 'plugins'] as const) {
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
