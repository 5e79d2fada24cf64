import type { InjectionToken, ModuleMetadata, Provider } from '@nestjs/common';
import { PaymentsConfigurationError } from '../errors/payments.errors.js';
import { PAYMENTS_DISPATCH_PLUGINS, type PaymentsDispatchPlugin } from './contracts/dispatch-plugin.interface.js';
import type { IntentWatchStore } from './contracts/intent-watch-store.interface.js';
import type {
  PaymentsPluginOptionContext,
  PaymentsReceiverPlugin,
} from './contracts/payments-receiver-plugin.interface.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from './contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from './contracts/payments-webhooks.options.js';
import {
  deliveryListenerHooks,
  deliveryListenerPlugin,
  resolveDeliveryListener,
} from './journal/delivery-listener.plugin.js';
import { paymentsQueuePlugin } from './queue/payments-queue.plugin.js';
import { resolveProcessing } from './queue/payments-queue.validator.js';
import { resolveReconcileOptions } from './reconcile/payments-reconcile.validator.js';
import { reconciliationHooks, reconciliationPlugin } from './reconcile/reconciliation.plugin.js';
import { TransactionalHandlersCheck } from './transactional/transactional-handlers.check.js';
import type { PaymentsInbox } from './transactional/payments-inbox.js';
import { resolveTransactionsOptions } from './transactional/payments-transactions.options.js';
import { transactionalInboxHooks, transactionalInboxPlugin } from './transactional/transactional-inbox.plugin.js';

export { intentWatchStoreFor } from './reconcile/reconciliation.plugin.js';

/*
 * The built-in plug-ins, by the receiver option that turns each on (declared in `forRootAsync({ receiver
 * })` and `PaymentsWebhooksModule.registerAsync`, read from the values by `forRoot({ webhooks })` and
 * `register`; see payments-webhooks.declaration.ts, whose naming table names the flags in errors). The
 * receiver itself names none: it registers what each plug-in object brings and calls the hooks.
 */

/** The built-in plug-ins a flag turns on, by the receiver option that turns each on. */
export type ReceiverPluginName = 'transactions' | 'reconcile';

/** Which built-in plug-ins a receiver registers: `true` registered, `false` not. */
export type ReceiverPluginsSpec = Record<ReceiverPluginName, boolean>;

/** The receiver instance a built-in plug-in is made for, as its declaration says. */
export interface ReceiverPluginInstance {
  /** The instance name (`'default'` when unnamed). */
  readonly name: string;
  readonly unnamed: boolean;
  /** `processing: 'queue'`: the queue plug-in; and whether it runs a worker. */
  readonly queued: boolean;
  readonly worker?: boolean;
}

/** Each flag's plug-in, and what a receiver without it registers instead (its one boot check). */
const BUILT_IN: Record<
  ReceiverPluginName,
  { plugin: (instance: ReceiverPluginInstance) => PaymentsReceiverPlugin; without?: Provider[] }
> = {
  transactions: { plugin: transactionalInboxPlugin, without: [TransactionalHandlersCheck] },
  reconcile: { plugin: reconciliationPlugin },
};

const PLUGIN_NAMES = Object.keys(BUILT_IN) as ReceiverPluginName[];

/**
 * The receiver values the built-in plug-ins read (which an async options factory may supply), each
 * checked by its own feature's resolver; `validateWebhooksOptions` loops over them.
 */
const VALUES: ReadonlyArray<{
  option: 'transactions' | 'reconcile' | 'deliveryListener' | 'processing';
  resolve(raw: unknown, receiver: PaymentsPluginOptionContext): unknown;
}> = [
  { option: 'processing', resolve: resolveProcessing },
  { option: 'deliveryListener', resolve: resolveDeliveryListener },
  { option: 'transactions', resolve: resolveTransactionsOptions },
  { option: 'reconcile', resolve: resolveReconcileOptions },
];

/** The built-in plug-ins' values of `raw` (a receiver's options), each checked by its feature. */
export function resolvePluginValues(
  raw: Record<string, unknown>,
  receiver: PaymentsPluginOptionContext,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const { option, resolve } of VALUES) values[option] = resolve(raw[option], receiver);
  return values;
}

/** Whether a `webhooks.<plug-in>` value turns the plug-in on (`false` and a missing value do not). */
const isOn = (value: unknown): boolean => value !== undefined && value !== false;

/**
 * `forRoot` / `register`: the values are known when the module is built, so the plug-ins whose option is
 * set; reconciliation is on unless `webhooks.reconcile` is `false` (it does nothing without a client).
 */
export function receiverPluginsOf(webhooks: unknown): ReceiverPluginsSpec {
  const raw = typeof webhooks === 'object' && webhooks !== null ? (webhooks as Record<string, unknown>) : {};
  return { transactions: isOn(raw['transactions']), reconcile: raw['reconcile'] !== false };
}

/**
 * `forRootAsync` / `registerAsync`: the flags declared beside the structure. `transactions` left out is
 * `false`; `reconcile` left out is `true` (reconciliation is on by default: the factory's
 * `webhooks.reconcile: false` turns it off, `reconcile: false` here leaves its providers out).
 * `option(name)` names a flag in the error of a value that is not a boolean.
 */
export function declaredReceiverPlugins(
  flags: Partial<Record<ReceiverPluginName, unknown>>,
  option: (name: ReceiverPluginName) => string,
): ReceiverPluginsSpec {
  for (const name of PLUGIN_NAMES) {
    const value = flags[name];
    if (value !== undefined && typeof value !== 'boolean') {
      throw new PaymentsConfigurationError(
        option(name),
        `must be a boolean, got ${value === null ? 'null' : typeof value}`,
        `pass ${name}: true when the options factory may set webhooks.${name}, false (or leave it out) otherwise`,
      );
    }
  }
  return { transactions: flags.transactions === true, reconcile: flags.reconcile !== false };
}

/**
 * The plug-in objects of a receiver: the queue when it is queued, the built-ins `spec` turns on, the
 * delivery listener (every receiver has it: its value decides at boot), then the app's own (`plugins`),
 * in the order their hooks run. Two plug-ins of one name, or two with a processor, fail the boot.
 */
export function receiverPluginsFor(
  spec: ReceiverPluginsSpec,
  instance: ReceiverPluginInstance,
  own: readonly PaymentsReceiverPlugin[] = [],
): PaymentsReceiverPlugin[] {
  const plugins = [
    ...(instance.queued ? [paymentsQueuePlugin(instance)] : []),
    ...PLUGIN_NAMES.filter((name) => spec[name]).map((name) => BUILT_IN[name].plugin(instance)),
    deliveryListenerPlugin(),
    ...checkedPlugins(own),
  ];
  const names = new Set<string>();
  for (const plugin of plugins) {
    if (names.has(plugin.name)) {
      throw new PaymentsConfigurationError(
        'plugins',
        `holds two plug-ins named '${plugin.name}'`,
        'pass each plug-in once (a built-in one is turned on by its option, e.g. webhooks.transactions)',
      );
    }
    names.add(plugin.name);
  }
  const processing = plugins.filter((plugin) => plugin.processor !== undefined);
  if (processing.length > 1) {
    throw new PaymentsConfigurationError(
      'plugins',
      `holds two plug-ins that process events (${processing.map((plugin) => plugin.name).join(', ')})`,
      "keep one: a receiver's events go through one processor (processing: 'queue' is the queue plug-in's)",
    );
  }
  return plugins;
}

/** The app's `plugins`, each checked for the shape of a `PaymentsReceiverPlugin`. */
function checkedPlugins(own: unknown): readonly PaymentsReceiverPlugin[] {
  if (own === undefined) return [];
  if (!Array.isArray(own)) {
    throw new PaymentsConfigurationError(
      'plugins',
      'must be an array of plug-ins',
      'pass plugins: [myPlugin()], or omit it',
    );
  }
  own.forEach((plugin: unknown, index) => {
    const record = plugin as Partial<PaymentsReceiverPlugin> | null;
    const fault =
      typeof record !== 'object' || record === null
        ? 'is not an object'
        : typeof record.name !== 'string' || record.name === ''
          ? 'has no name'
          : record.hooks !== undefined && typeof record.hooks.useFactory !== 'function'
            ? 'has hooks without a useFactory'
            : record.providers !== undefined && !Array.isArray(record.providers)
              ? 'has providers that are not an array'
              : record.processor !== undefined && !record.providers?.some((p) => providerToken(p) === record.processor)
                ? 'has a processor that is none of its providers'
                : undefined;
    if (fault !== undefined) {
      throw new PaymentsConfigurationError(
        `plugins[${index}]`,
        fault,
        'pass a PaymentsReceiverPlugin: { name, providers?, hooks?: { inject?, useFactory } }',
      );
    }
  });
  return own as PaymentsReceiverPlugin[];
}

/** The token a provider is registered under (a class is its own). */
const providerToken = (provider: Provider): unknown =>
  typeof provider === 'function' ? provider : (provider as { provide?: unknown }).provide;

/** How the errors of one registration name a plug-in's flag, its value and the fix. */
export interface ReceiverPluginsNaming {
  /** The flag, e.g. `receiver.reconcile`. */
  option(name: ReceiverPluginName): string;
  /** The value that turned the plug-in on, e.g. `webhooks.reconcile`. */
  value(name: ReceiverPluginName): string;
  fix(name: ReceiverPluginName): string;
}

/**
 * Fails the boot when the factory's options turn on a plug-in whose providers were not registered
 * (declared `false`), naming the flag and the fix. Reconciliation left on by default where its
 * providers were declared out (`receiver: { reconcile: false }`) is off: the options then say so.
 */
export function checkReceiverPlugins(
  spec: ReceiverPluginsSpec,
  webhooks: ResolvedWebhooksOptions,
  naming: ReceiverPluginsNaming,
): ResolvedWebhooksOptions {
  if (!spec.reconcile && webhooks.reconcile?.byDefault === true) {
    webhooks = Object.freeze({ ...webhooks, reconcile: undefined });
  }
  for (const name of PLUGIN_NAMES) {
    if (spec[name] || webhooks[name] === undefined) continue;
    throw new PaymentsConfigurationError(
      naming.option(name),
      `is not declared, but the options factory sets ${naming.value(name)} (a plug-in's providers are registered before the factory runs)`,
      naming.fix(name),
    );
  }
  return webhooks;
}

/**
 * What the plug-ins of a receiver register: each one's imports, providers and exports, what a receiver
 * without a built-in registers instead, the dispatcher's list of hooks (`PAYMENTS_DISPATCH_PLUGINS`),
 * built once at boot from each plug-in's `hooks`, and the processor a plug-in brings (else none: inline).
 */
export function createReceiverPluginsPart(
  plugins: readonly PaymentsReceiverPlugin[],
  spec: ReceiverPluginsSpec,
): {
  imports: NonNullable<ModuleMetadata['imports']>;
  providers: Provider[];
  exports: InjectionToken[];
  processor: InjectionToken | undefined;
} {
  const hooked = plugins.filter((plugin) => plugin.hooks !== undefined);
  const inject = hooked.flatMap((plugin) => plugin.hooks!.inject ?? []);
  const providers: Provider[] = [
    ...PLUGIN_NAMES.filter((name) => !spec[name]).flatMap((name) => BUILT_IN[name].without ?? []),
    ...plugins.flatMap((plugin) => plugin.providers ?? []),
    {
      // The hooks of the plug-ins in use, in order (the dispatcher imports none of them).
      provide: PAYMENTS_DISPATCH_PLUGINS,
      useFactory: (webhooks: ResolvedWebhooksOptions, ...dependencies: unknown[]): PaymentsDispatchPlugin[] => {
        const list: PaymentsDispatchPlugin[] = [];
        for (const plugin of hooked) {
          const own = dependencies.splice(0, plugin.hooks!.inject?.length ?? 0) as never[];
          const hooks = plugin.hooks!.useFactory(webhooks, ...own);
          if (hooks !== undefined) list.push(hooks);
        }
        return list;
      },
      inject: [PAYMENTS_WEBHOOKS_OPTIONS, ...inject],
    },
  ];
  return {
    imports: plugins.flatMap((plugin) => [...(plugin.imports ?? [])]),
    providers,
    exports: plugins.flatMap((plugin) => [...(plugin.exports ?? [])]),
    processor: plugins.find((plugin) => plugin.processor !== undefined)?.processor,
  };
}

/** The built-in plug-in parts a receiver built for its options (each absent when its option is). */
export interface ReceiverPluginParts {
  /** The transactional inbox (`webhooks.transactions`). */
  inbox?: PaymentsInbox;
  /** Reconciliation's watch list (`webhooks.reconcile`). */
  watchList?: IntentWatchStore;
}

/**
 * The built-in plug-ins' hooks for `webhooks`, outside Nest (the simulation, the model check): what
 * `PAYMENTS_DISPATCH_PLUGINS` holds for a receiver built from these parts, in the same order.
 */
export function dispatchPluginsOf(
  webhooks: ResolvedWebhooksOptions,
  parts: ReceiverPluginParts,
): PaymentsDispatchPlugin[] {
  const hooks: Array<PaymentsDispatchPlugin | undefined> = [
    parts.inbox && transactionalInboxHooks(webhooks, parts.inbox),
    reconciliationHooks(webhooks, parts.watchList),
    deliveryListenerHooks(webhooks),
  ];
  return hooks.filter((plugin): plugin is PaymentsDispatchPlugin => plugin !== undefined);
}
