import type { InjectionToken, ModuleMetadata, Provider } from '@nestjs/common';
import { PaymentsConfigurationError } from '../errors/payments.errors.js';
import { PAYMENTS_DISPATCH_PLUGINS, type PaymentsDispatchPlugin } from './contracts/dispatch-plugin.interface.js';
import type { IntentWatchStore } from './contracts/intent-watch-store.interface.js';
import type { PaymentsReceiverPlugin, PaymentsValuesPlugin } from './contracts/payments-receiver-plugin.interface.js';
import { PAYMENTS_WEBHOOKS_OPTIONS } from './contracts/payments-webhooks.constants.js';
import type { ResolvedWebhooksOptions } from './contracts/payments-webhooks.options.js';
import { deliveryListenerHooks, deliveryListenerPlugin } from './journal/delivery-listener.plugin.js';
import { reconciliationHooks, reconciliationPlugin } from './reconcile/reconciliation.plugin.js';
import { TransactionalHandlersCheck } from './transactional/transactional-handlers.check.js';
import type { PaymentsInbox } from './transactional/payments-inbox.js';
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

/** Each flag's plug-in, and what a receiver without it registers instead (its one boot check). */
const BUILT_IN: Record<ReceiverPluginName, { plugin: () => PaymentsValuesPlugin; without?: Provider[] }> = {
  transactions: { plugin: transactionalInboxPlugin, without: [TransactionalHandlersCheck] },
  reconcile: { plugin: reconciliationPlugin },
};

const PLUGIN_NAMES = Object.keys(BUILT_IN) as ReceiverPluginName[];

/** The built-in plug-ins every receiver has, whose options decide at boot whether they do anything. */
const ALWAYS: ReadonlyArray<() => PaymentsValuesPlugin> = [deliveryListenerPlugin];

/** Every built-in plug-in turned on by a value, whose validator checks that value (`validateWebhooksOptions`). */
export const VALUES_PLUGINS: readonly PaymentsValuesPlugin[] = Object.freeze([
  ...PLUGIN_NAMES.map((name) => BUILT_IN[name].plugin()),
  ...ALWAYS.map((plugin) => plugin()),
]);

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
 * The plug-in objects of a receiver: the built-ins `spec` turns on, the ones every receiver has, then the
 * app's own (`plugins`), in the order their hooks run. Two plug-ins of one name fail the boot.
 */
export function receiverPluginsFor(
  spec: ReceiverPluginsSpec,
  own: readonly PaymentsReceiverPlugin[] = [],
): PaymentsReceiverPlugin[] {
  const plugins = [
    ...PLUGIN_NAMES.filter((name) => spec[name]).map((name) => BUILT_IN[name].plugin()),
    ...ALWAYS.map((plugin) => plugin()),
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
 * What the plug-ins of a receiver register: each one's imports and providers (and, for the unnamed
 * instance, its exports), what a receiver without a built-in registers instead, and the dispatcher's
 * list of hooks (`PAYMENTS_DISPATCH_PLUGINS`), built once at boot from each plug-in's `hooks`.
 */
export function createReceiverPluginsPart(
  plugins: readonly PaymentsReceiverPlugin[],
  spec: ReceiverPluginsSpec,
  unnamed: boolean,
): { imports: NonNullable<ModuleMetadata['imports']>; providers: Provider[]; exports: InjectionToken[] } {
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
    exports: unnamed ? plugins.flatMap((plugin) => [...(plugin.exports ?? [])]) : [],
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
