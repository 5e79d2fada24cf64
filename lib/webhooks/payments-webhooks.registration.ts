import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';
import { fail, isObject, kind } from '../errors/payments-option.checks.js';
import type { PaymentsReceiverPlugin } from './contracts/payments-receiver-plugin.interface.js';
import type { PaymentsQueueOptions } from './contracts/payments-queue.options.js';
import type { PaymentsReceiverPlugins, PaymentsWebhooksOptions } from './contracts/payments-webhooks.options.js';
import type { ReceiverDeclaration } from './payments-webhooks.declaration.js';

/*
 * What `PaymentsWebhooksModule.register[Async]` is given: the structure of a receiver (instance, route,
 * processing, plug-ins; parsed by `receiverDeclarationOf`, payments-webhooks.declaration.ts) and its
 * values, checked here against that structure.
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
 * on: `reconcile`, default true, and `transactions`, default false; see `PaymentsReceiverPlugins`), and a
 * factory of the values.
 */
export interface PaymentsWebhooksModuleAsyncOptions extends PaymentsWebhooksRegistration, PaymentsReceiverPlugins {
  imports?: ModuleMetadata['imports'];
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  useFactory: (...args: never[]) => PaymentsWebhooksValues | Promise<PaymentsWebhooksValues>;
}

/** The keys of `register(options)` that are structure; the rest are values. */
export const STRUCTURE_KEYS = ['name', 'path', 'processing', 'worker', 'isGlobal', 'plugins'] as const;

/** The receiver options of `values` under the declared structure: the structure is never read from the values. */
export function webhooksOptionsOf(declaration: ReceiverDeclaration, values: unknown): Record<string, unknown> {
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
  if (declaration.queued && queue === undefined) {
    fail(
      'PaymentsWebhooksModule values.queue',
      "is missing while processing is 'queue'",
      'return { queue: { connection } } from the values, or register with processing: inline',
    );
  }
  if (!declaration.queued && queue !== undefined) {
    fail(
      'PaymentsWebhooksModule values.queue',
      "is set while processing is 'inline'",
      "register with processing: 'queue' to use it, or drop it",
    );
  }
  return {
    ...rest,
    path: declaration.path,
    processing: declaration.queued
      ? { queue: { ...(queue as object), worker: declaration.worker !== false } }
      : 'inline',
  };
}
