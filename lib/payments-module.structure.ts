import { PaymentsConfigurationError } from './errors/payments.errors.js';
import { DEFAULT_PAYMENTS_INSTANCE } from './core/payments.defaults.js';
import { PAYMENTS_INSTANCE_NAME_PATTERN } from './core/payments.instance.js';
import type { PaymentsReceiverPlugin } from './webhooks/contracts/payments-receiver-plugin.interface.js';
import type { PAYMENTS_ASYNC_OPTIONS_TYPE, PaymentsReceiverStructure } from './payments.module-definition.js';
import type { PaymentsModuleOptions } from './payments-options.interface.js';
import { checkWebhooksRoute } from './webhooks/payments-webhooks.providers.js';
import type {
  ReceiverPluginName,
  ReceiverPluginsNaming,
  ReceiverPluginsSpec,
} from './webhooks/payments-webhooks.plugins.js';

/** What the structure of one instance depends on, known before any options factory runs. */
export interface PaymentsInstanceShape {
  name: string;
  path: string | false;
  queued: boolean | undefined;
  worker?: boolean;
  /** The plug-ins whose providers are registered (undefined: both, deprecated; see `PaymentsReceiverPlugins`). */
  plugins: ReceiverPluginsSpec;
  /** The app's own plug-ins (`webhooks.plugins`, `receiver.plugins`). */
  own?: readonly PaymentsReceiverPlugin[];
  /** `forRootAsync` declared its structure with the deprecated `webhooksPath` / `webhooksProcessing` (errors name them). */
  legacy?: boolean;
}

/** `forRootAsync`'s static receiver structure: `receiver`, or the deprecated `webhooksPath` / `webhooksProcessing`. */
export function receiverStructureOf(options: typeof PAYMENTS_ASYNC_OPTIONS_TYPE): false | PaymentsReceiverStructure {
  const { receiver, webhooksPath, webhooksProcessing } = options;
  if (receiver !== undefined && (webhooksPath !== undefined || webhooksProcessing !== undefined)) {
    throw new PaymentsConfigurationError(
      webhooksPath !== undefined ? 'webhooksPath' : 'webhooksProcessing',
      'is given beside receiver (it is its deprecated spelling)',
      'declare the structure once: receiver: { path, processing } (or receiver: false)',
    );
  }
  const structure: false | PaymentsReceiverStructure =
    receiver !== undefined
      ? receiver
      : webhooksPath === false
        ? false
        : { path: webhooksPath, processing: webhooksProcessing };
  if (structure === false) return false;
  if (typeof structure !== 'object' || structure === null) {
    throw new PaymentsConfigurationError(
      'receiver',
      'must be { path?, processing?, worker? } or false (with the plug-in flags reconcile?, transactions?)',
      "pass receiver: { path: 'payments/webhooks' }, or receiver: false for no receiver",
    );
  }
  const { path, processing } = structure;
  if (path !== undefined && (typeof path !== 'string' || path.replace(/^\/+|\/+$/g, '') === '')) {
    throw new PaymentsConfigurationError(
      receiver !== undefined ? 'receiver.path' : 'webhooksPath',
      'must be a non-empty string',
      "pass a route such as 'payments/webhooks'",
    );
  }
  if (processing !== undefined && processing !== 'inline' && processing !== 'queue') {
    throw new PaymentsConfigurationError(
      receiver !== undefined ? 'receiver.processing' : 'webhooksProcessing',
      "must be 'inline' or 'queue'",
      "pass 'queue' when the factory returns processing: { queue }, 'inline' or nothing otherwise",
    );
  }
  return structure;
}

export function instanceNameOf(name: unknown): string {
  if (name === undefined) return DEFAULT_PAYMENTS_INSTANCE;
  if (typeof name !== 'string' || !PAYMENTS_INSTANCE_NAME_PATTERN.test(name)) {
    throw new PaymentsConfigurationError(
      'name',
      'must be 1 to 64 letters, digits, "-" or "_", starting with a letter or a digit',
      "pass a short name such as 'eu' or 'live', or omit it for the default instance",
    );
  }
  return name;
}

/** Fails the boot when the factory's options ask for another structure than the static one. */
export function checkShape(shape: PaymentsInstanceShape, raw: PaymentsModuleOptions, queued: boolean): void {
  checkWebhooksRoute(shape.path, raw, shape.legacy ? 'webhooksPath' : 'receiver.path');
  if (shape.path === false && raw.webhooks) {
    throw new PaymentsConfigurationError(
      shape.legacy ? 'webhooksPath' : 'receiver',
      'is false (no route), but the options factory configures webhooks',
      "pass PaymentsModule.forRootAsync({ receiver: { path: 'payments/webhooks' }, ... }) to receive them (routes are registered before the factory runs), or drop webhooks from the factory",
    );
  }
  if (shape.queued !== undefined && shape.queued !== queued && shape.path !== false) {
    throw new PaymentsConfigurationError(
      shape.legacy ? 'webhooksProcessing' : 'receiver.processing',
      `is '${shape.queued ? 'queue' : 'inline'}', but the options factory sets processing '${queued ? 'queue' : 'inline'}'`,
      `pass PaymentsModule.forRootAsync({ receiver: { processing: '${queued ? 'queue' : 'inline'}' }, ... })`,
    );
  }
}

/** How `forRootAsync`'s errors name a plug-in flag of `receiver`. */
export const RECEIVER_PLUGINS_NAMING: ReceiverPluginsNaming = {
  option: (name: ReceiverPluginName) => `receiver.${name}`,
  value: (name: ReceiverPluginName) => `webhooks.${name}`,
  fix: (name: ReceiverPluginName) =>
    `pass PaymentsModule.forRootAsync({ receiver: { ..., ${name}: true }, ... }), or drop webhooks.${name} from the factory`,
};
