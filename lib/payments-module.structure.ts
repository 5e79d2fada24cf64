import { PaymentsConfigurationError } from './errors/payments.errors.js';
import type { PaymentsModuleOptions } from './payments-options.interface.js';
import type { ReceiverDeclaration } from './webhooks/payments-webhooks.declaration.js';
import { normaliseWebhooksPath } from './webhooks/payments-webhooks.providers.js';

/*
 * The check of `forRootAsync`'s factory against its declaration (parsed by `receiverDeclarationOf`,
 * payments-webhooks.declaration.ts): the options a factory returns cannot change the structure.
 */

/**
 * Routes are registered before an async options factory runs, so `forRootAsync` takes the path as the
 * static `receiver: { path }`. This fails the boot when the factory's options ask for another path.
 */
export function checkWebhooksRoute(declaration: ReceiverDeclaration, raw: { webhooks?: unknown }): true {
  const webhooks = (raw as { webhooks?: unknown }).webhooks;
  if (typeof webhooks !== 'object' || webhooks === null) return true;
  const requested = (webhooks as { path?: unknown }).path;
  if (requested === undefined) return true;
  const path = normaliseWebhooksPath(requested);
  const { naming } = declaration;
  if (declaration.path === false) {
    throw new PaymentsConfigurationError(
      naming.structure.option,
      `is false (no route), but the options factory sets webhooks.path '${path}'`,
      `pass PaymentsModule.forRootAsync({ receiver: { path: '${path}' }, ... }): routes are registered before the factory runs`,
    );
  }
  if (path !== declaration.path) {
    throw new PaymentsConfigurationError(
      naming.path,
      `is '${declaration.path}', but the options factory sets webhooks.path '${path}'`,
      `pass PaymentsModule.forRootAsync({ receiver: { path: '${path}' }, ... }) (routes are registered before the factory runs), or drop webhooks.path from the factory`,
    );
  }
  return true;
}

/** Fails the boot when the factory's options ask for another structure than the declared one. */
export function checkShape(declaration: ReceiverDeclaration, raw: PaymentsModuleOptions, queued: boolean): void {
  checkWebhooksRoute(declaration, raw);
  const { naming } = declaration;
  if (declaration.path === false && raw.webhooks) {
    throw new PaymentsConfigurationError(
      naming.structure.option,
      'is false (no route), but the options factory configures webhooks',
      "pass PaymentsModule.forRootAsync({ receiver: { path: 'payments/webhooks' }, ... }) to receive them (routes are registered before the factory runs), or drop webhooks from the factory",
    );
  }
  if (declaration.queued !== queued && declaration.path !== false) {
    throw new PaymentsConfigurationError(
      naming.processing.option,
      `is '${declaration.queued ? 'queue' : 'inline'}', but the options factory sets processing '${queued ? 'queue' : 'inline'}'`,
      `pass PaymentsModule.forRootAsync({ receiver: { processing: '${queued ? 'queue' : 'inline'}' }, ... })`,
    );
  }
}
