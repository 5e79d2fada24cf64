import { DEFAULT_PAYMENTS_INSTANCE } from '../core/payments.defaults.js';
import { PAYMENTS_INSTANCE_NAME_PATTERN } from '../core/payments.instance.js';
import { fail, isObject } from '../errors/payments-option.checks.js';
import type { PaymentsReceiverPlugin } from './contracts/payments-receiver-plugin.interface.js';
import {
  declaredReceiverPlugins,
  receiverPluginsOf,
  type ReceiverPluginName,
  type ReceiverPluginsNaming,
  type ReceiverPluginsSpec,
} from './payments-webhooks.plugins.js';
import { normaliseWebhooksPath } from './payments-webhooks.providers.js';

/*
 * The one parser of a receiver's declaration: the structure Nest must know before any options factory
 * runs (instance, route, processing, worker, plug-ins). `PaymentsModule.forRootAsync({ receiver })` and
 * `PaymentsWebhooksModule.registerAsync(...)` declare it; `forRoot({ webhooks })` and `register(...)`
 * are sugar that read it from their values and reach the same parser. One naming table says how each
 * form's errors name an option and the fix.
 */

/** The two forms a receiver is declared in: `PaymentsModule.forRoot[Async]` and `PaymentsWebhooksModule.register[Async]`. */
export type ReceiverDeclarationForm = 'forRootAsync' | 'register';

/** How the errors of one declaration form name its options, and the fix of each. */
export interface ReceiverDeclarationNaming {
  /** Where the structure is, in the options of the form (`receiver`), or undefined when they hold it flat. */
  readonly within?: 'receiver';
  /** The structure as a whole (`receiver`): what it must be, and the fix. */
  readonly structure: { readonly option: string; readonly problem: string; readonly fix: string };
  /** The instance name. */
  readonly name: { readonly option: string; readonly problem: string; readonly fix: string };
  /** The route. */
  readonly path: string;
  /** The processing, and the fix of a bad one. */
  readonly processing: { readonly option: string; readonly fix: string };
  /** Whether a queued receiver runs a worker. */
  readonly worker: string;
  /** The plug-in flags (`transactions`, `reconcile`), the value a factory turns each on with, and the fix. */
  readonly plugins: ReceiverPluginsNaming;
  /** Options of the form that are removed, and what to write instead. */
  readonly removed: Readonly<Record<string, { readonly was: string; readonly fix: string }>>;
}

/**
 * The one naming table: per declaration form, how its errors name an option and the fix. `forRoot`
 * reads its structure from `webhooks` (a bad value there is reported by the validator, naming
 * `webhooks.<option>`), so it shares `forRootAsync`'s entry; `register` and `registerAsync` share one.
 */
export const RECEIVER_DECLARATION_NAMING: Readonly<Record<ReceiverDeclarationForm, ReceiverDeclarationNaming>> = {
  forRootAsync: {
    within: 'receiver',
    structure: {
      option: 'receiver',
      problem: 'must be { path?, processing?, worker? } or false (with the plug-in flags reconcile?, transactions?)',
      fix: "pass receiver: { path: 'payments/webhooks' }, or receiver: false for no receiver",
    },
    name: {
      option: 'name',
      problem: 'must be 1 to 64 letters, digits, "-" or "_", starting with a letter or a digit',
      fix: "pass a short name such as 'eu' or 'live', or omit it for the default instance",
    },
    path: 'receiver.path',
    processing: {
      option: 'receiver.processing',
      fix: "pass 'queue' when the factory returns processing: { queue }, 'inline' or nothing otherwise",
    },
    worker: 'receiver.worker',
    plugins: {
      option: (name: ReceiverPluginName) => `receiver.${name}`,
      value: (name: ReceiverPluginName) => `webhooks.${name}`,
      fix: (name: ReceiverPluginName) =>
        `pass PaymentsModule.forRootAsync({ receiver: { ..., ${name}: true }, ... }), or drop webhooks.${name} from the factory`,
    },
    removed: {
      webhooksPath: {
        was: 'receiver.path',
        fix: "pass PaymentsModule.forRootAsync({ receiver: { path: 'payments/webhooks' }, ... }) (or receiver: false for no route)",
      },
      webhooksProcessing: {
        was: 'receiver.processing',
        fix: "pass PaymentsModule.forRootAsync({ receiver: { processing: 'queue' }, ... }) (or 'inline', the default)",
      },
    },
  },
  register: {
    structure: {
      option: 'PaymentsWebhooksModule.register(options)',
      problem: 'must be an object',
      fix: 'pass { path, verifier, ... }',
    },
    name: {
      option: 'PaymentsWebhooksModule name',
      problem: 'must be 1 to 64 letters, digits, "-" or "_"',
      fix: 'pass the name of the PaymentsModule instance, or omit it',
    },
    path: 'PaymentsWebhooksModule path',
    processing: {
      option: 'PaymentsWebhooksModule processing',
      fix: "pass 'queue' to answer once enqueued (BullMQ), or omit it",
    },
    worker: 'PaymentsWebhooksModule worker',
    plugins: {
      option: (name: ReceiverPluginName) => `PaymentsWebhooksModule ${name}`,
      value: (name: ReceiverPluginName) => `values.${name}`,
      fix: (name: ReceiverPluginName) =>
        `pass PaymentsWebhooksModule.registerAsync({ ..., ${name}: true }), or drop ${name} from the values`,
    },
    removed: {},
  },
};

/** A receiver's structure, parsed: what its parts are built from, known before any options factory runs. */
export interface ReceiverDeclaration {
  /** The instance name (`'default'` when unnamed). */
  readonly name: string;
  /** The route (normalised), or false for no receiver (`receiver: false`, `webhooks: false`). */
  readonly path: string | false;
  /** Whether the queue part is registered (`processing: 'queue'`); inline otherwise. */
  readonly queued: boolean;
  /** Whether a queued receiver runs a worker; undefined: the values decide (`processing.queue.worker`). */
  readonly worker: boolean | undefined;
  /** The built-in plug-ins whose providers are registered. */
  readonly plugins: ReceiverPluginsSpec;
  /** The app's own plug-ins (`plugins`), after the built-in ones. */
  readonly own: readonly PaymentsReceiverPlugin[] | undefined;
  /** How the errors of this declaration name its options. */
  readonly naming: ReceiverDeclarationNaming;
}

/** The instance name of `raw.name`, checked (`'default'` when omitted). */
export function instanceNameOf(name: unknown, form: ReceiverDeclarationForm = 'forRootAsync'): string {
  if (name === undefined) return DEFAULT_PAYMENTS_INSTANCE;
  const naming = RECEIVER_DECLARATION_NAMING[form].name;
  if (typeof name !== 'string' || !PAYMENTS_INSTANCE_NAME_PATTERN.test(name)) {
    fail(naming.option, naming.problem, naming.fix);
  }
  return name as string;
}

/**
 * The receiver's declaration in `raw`, the options of `form` (`forRootAsync`'s: `{ name, receiver }`;
 * `register[Async]`'s: `{ name, path, processing, worker, transactions, reconcile, plugins }`), checked at
 * once: a bad structure fails before Nest builds anything, naming the option as the user wrote it. Without
 * `processing` the receiver is inline; without the plug-in flags, reconciliation only (see
 * `declaredReceiverPlugins`).
 */
export function receiverDeclarationOf(raw: unknown, form: ReceiverDeclarationForm): ReceiverDeclaration {
  const naming = RECEIVER_DECLARATION_NAMING[form];
  if (!isObject(raw)) fail(naming.structure.option, naming.structure.problem, naming.structure.fix);
  const options = raw as Record<string, unknown>;
  for (const [key, { was, fix }] of Object.entries(naming.removed)) {
    if (options[key] !== undefined) fail(key, `is removed (it was the deprecated spelling of ${was})`, fix);
  }
  const name = instanceNameOf(options['name'], form);
  const structure = naming.within === undefined ? options : (options[naming.within] ?? {});
  if (structure === false) {
    return {
      name,
      path: false,
      queued: false,
      worker: undefined,
      plugins: { transactions: false, reconcile: false },
      own: undefined,
      naming,
    };
  }
  if (!isObject(structure)) fail(naming.structure.option, naming.structure.problem, naming.structure.fix);
  const { path, processing, worker, plugins } = structure as Record<string, unknown>;
  if (path !== undefined && (typeof path !== 'string' || path.replace(/^\/+|\/+$/g, '') === '')) {
    fail(naming.path, 'must be a non-empty string', "pass a route such as 'payments/webhooks'");
  }
  if (processing !== undefined && processing !== 'inline' && processing !== 'queue') {
    fail(naming.processing.option, "must be 'inline' or 'queue'", naming.processing.fix);
  }
  if (worker !== undefined && typeof worker !== 'boolean') {
    fail(
      naming.worker,
      'must be a boolean',
      "pass worker: false for a process that only enqueues (with processing: 'queue'), or omit it",
    );
  }
  return {
    name,
    path: normaliseWebhooksPath(path),
    queued: processing === 'queue',
    worker: worker as boolean | undefined,
    plugins: declaredReceiverPlugins(structure as Record<string, unknown>, naming.plugins.option),
    own: plugins as readonly PaymentsReceiverPlugin[] | undefined,
    naming,
  };
}

/**
 * `forRoot({ name, webhooks })` as the declaration `forRootAsync` would give it: the route, processing,
 * worker and plug-ins its values turn on. Bad values are left to the validator (it names
 * `webhooks.<option>` at boot).
 */
export function forRootDeclarationOf(options: { name?: unknown; webhooks?: unknown }): ReceiverDeclaration {
  const { webhooks } = options;
  if (webhooks === false) return receiverDeclarationOf({ name: options.name, receiver: false }, 'forRootAsync');
  const values = isObject(webhooks) ? webhooks : {};
  const processing = values['processing'];
  return receiverDeclarationOf(
    {
      name: options.name,
      receiver: {
        path: normaliseWebhooksPath(values['path']),
        processing: processing !== undefined && processing !== 'inline' ? 'queue' : 'inline',
        worker: isObject(processing)
          ? (processing as { queue?: { worker?: unknown } }).queue?.worker !== false
          : undefined,
        plugins: values['plugins'],
        ...receiverPluginsOf(values),
      },
    },
    'forRootAsync',
  );
}

/**
 * `PaymentsWebhooksModule.register(options)`, whose values are known now, as the declaration
 * `registerAsync` would give it: the plug-ins are those its values turn on.
 */
export function registerDeclarationOf(options: object): ReceiverDeclaration {
  return receiverDeclarationOf({ ...options, ...receiverPluginsOf(options) }, 'register');
}
