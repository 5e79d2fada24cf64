import { isDefaultPaymentsInstance, type PaymentsInstanceDescriptor } from './core/payments.instance.js';
import { PaymentsConfigurationError } from './errors/payments.errors.js';

/**
 * Refuses at boot what would make two instances (or two receivers) take each other's deliveries: the
 * same name, the same route (or routes that differ only in letter case), the same queue, a receiver
 * registered apart for an instance that has a route of its own. `me` is one `PaymentsModule` instance,
 * `others` every other descriptor of the app.
 */
export function checkPaymentsInstances(
  me: PaymentsInstanceDescriptor,
  others: readonly PaymentsInstanceDescriptor[],
): void {
  for (const other of others) {
    if (other.kind === 'receiver' && other.name === me.name && me.path !== false) {
      throw new PaymentsConfigurationError(
        'webhooks',
        `of instance '${me.name}' registers a route while PaymentsWebhooksModule registers a receiver for it too`,
        'pass webhooks: false to PaymentsModule (forRootAsync: receiver: false) when the receiver is registered with PaymentsWebhooksModule',
      );
    }
    if (other.name === me.name && other.kind === 'module') {
      throw new PaymentsConfigurationError(
        'name',
        isDefaultPaymentsInstance(me.name)
          ? 'is missing on two PaymentsModule instances: both are the default instance'
          : `'${me.name}' is given to two PaymentsModule instances`,
        "import PaymentsModule once per account, and give every instance but one its own name: PaymentsModule.forRoot({ name: 'eu', ... }) / forRootAsync({ name: 'eu', ... })",
      );
    }
    if (me.path !== false && other.path === me.path) {
      throw new PaymentsConfigurationError(
        'webhooks.path',
        `'${me.path}' is the route of two instances ('${other.name}' and '${me.name}')`,
        `give each instance its own route, e.g. webhooks: { path: 'payments/webhooks/${me.name}' } (forRootAsync: receiver: { path })`,
      );
    }
    // Express matches routes case-insensitively (and a proxy in front may too): routes that differ only
    // in letter case would take each other's deliveries, whatever the adapter, so they are refused.
    if (me.path !== false && other.path !== false && other.path.toLowerCase() === me.path.toLowerCase()) {
      throw new PaymentsConfigurationError(
        'webhooks.path',
        `'${me.path}' (instance '${me.name}') and '${other.path}' (instance '${other.name}') differ only in letter case: Express matches routes case-insensitively, so one route would receive the other's deliveries`,
        `give each instance its own route, e.g. webhooks: { path: '${me.path.toLowerCase()}/${isDefaultPaymentsInstance(me.name) ? other.name : me.name}' } (forRootAsync: receiver: { path })`,
      );
    }
    if (me.queue !== undefined && other.queue === me.queue) {
      throw new PaymentsConfigurationError(
        'webhooks.processing.queue.name',
        `'${me.queue.slice(me.queue.indexOf(':') + 1)}' is the queue of two instances ('${other.name}' and '${me.name}')`,
        'give each instance its own queue name, or omit it (a named instance defaults to payments-webhooks-<name>)',
      );
    }
  }
  const receivers = others.filter((other) => other.kind === 'receiver');
  for (const receiver of receivers) {
    if (receivers.filter((other) => other.name === receiver.name).length > 1) {
      throw new PaymentsConfigurationError(
        'PaymentsWebhooksModule',
        `registers two receivers for instance '${receiver.name}'`,
        'register one receiver per PaymentsModule instance (give the other instance its own name)',
      );
    }
    const twin = receivers.find(
      (other) =>
        other !== receiver &&
        (other.path === receiver.path || (receiver.queue !== undefined && other.queue === receiver.queue)),
    );
    if (twin) {
      throw new PaymentsConfigurationError(
        'PaymentsWebhooksModule',
        `gives instances '${twin.name}' and '${receiver.name}' the same ${twin.path === receiver.path ? `route '${String(receiver.path)}'` : 'queue'}`,
        'give each receiver its own path (and queue name)',
      );
    }
  }
}
