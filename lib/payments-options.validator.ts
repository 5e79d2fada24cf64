import { validatePaymentsClientOptions } from './client/payments-client.validator.js';
import { DEFAULT_PAYMENTS_INSTANCE } from './core/payments.defaults.js';
import { isDefaultPaymentsInstance } from './core/payments.instance.js';
import { PaymentsConfigurationError } from './errors/payments.errors.js';
import { fail, isObject, kind } from './errors/payments-option.checks.js';
import type { PaymentsModuleOptions, ResolvedPaymentsOptions } from './payments-options.interface.js';
import { validateWebhooksOptions } from './webhooks/payments-webhooks.validator.js';

/**
 * Validates the module options once, at boot, and fills in defaults: the client part first, then the
 * receiver (whose plug-ins' folders check their own values). Throws `PaymentsConfigurationError` naming the
 * option and the fix; never echoes `apiKey` or a secret. `instance` names the module instance (for
 * per-instance defaults such as the queue name).
 */
export function validatePaymentsOptions(
  input: PaymentsModuleOptions,
  instance: string = DEFAULT_PAYMENTS_INSTANCE,
): ResolvedPaymentsOptions {
  const raw: unknown = input;
  if (!isObject(raw)) {
    return fail('options', `must be an object, got ${kind(raw)}`, 'pass { apiKey, environment, baseUrl, webhooks }');
  }
  try {
    const client = validatePaymentsClientOptions(raw);
    const resolved: ResolvedPaymentsOptions = {
      ...client,
      webhooks: validateWebhooksOptions(raw.webhooks, client.environment, instance),
    };
    return Object.freeze(hideApiKey(resolved));
  } catch (error) {
    throw nameInstance(error, instance);
  }
}

/** With several instances, a boot error says whose option is wrong: "option `baseUrl` of instance 'eu'". */
function nameInstance(error: unknown, instance: string): unknown {
  if (!(error instanceof PaymentsConfigurationError) || isDefaultPaymentsInstance(instance)) return error;
  const before = error.message;
  error.message = before.replace(`\`${error.option}\``, `\`${error.option}\` of instance '${instance}'`);
  if (error.stack) error.stack = error.stack.replace(before, error.message);
  return error;
}

const validated = new WeakMap<object, ResolvedPaymentsOptions>();

/**
 * `validatePaymentsOptions`, once per options object: each part of one module instance takes its
 * slice from the same result, and whichever part Nest builds first reports the first bad option.
 */
export function resolvePaymentsOptions(
  input: PaymentsModuleOptions,
  instance: string = DEFAULT_PAYMENTS_INSTANCE,
): ResolvedPaymentsOptions {
  if (typeof input !== 'object' || input === null) return validatePaymentsOptions(input, instance);
  let resolved = validated.get(input);
  if (resolved === undefined) {
    resolved = validatePaymentsOptions(input, instance);
    validated.set(input, resolved);
  }
  return resolved;
}

/**
 * Makes `JSON.stringify` and `util.inspect` of the resolved options show `apiKey: '[REDACTED]'`
 * (the key stays an ordinary property for the code that needs it). Both hooks are non-enumerable,
 * so spreading the options copies neither.
 */
function hideApiKey(resolved: ResolvedPaymentsOptions): ResolvedPaymentsOptions {
  const redacted = (): Record<string, unknown> => ({ ...resolved, apiKey: '[REDACTED]' });
  Object.defineProperty(resolved, 'toJSON', { value: redacted, enumerable: false });
  Object.defineProperty(resolved, Symbol.for('nodejs.util.inspect.custom'), {
    value: (depth: number, inspectOptions: object, inspect: (value: unknown, options: object) => string) =>
      inspect(redacted(), { ...inspectOptions, depth }),
    enumerable: false,
  });
  return resolved;
}
