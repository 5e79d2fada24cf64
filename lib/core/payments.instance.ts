import type { PaymentsRuntime } from './payments.runtime.js';
import { DEFAULT_PAYMENTS_INSTANCE } from './payments.defaults.js';

/** Token of the name of the module instance a provider belongs to (`'default'` when unnamed). */
export const PAYMENTS_INSTANCE_NAME = Symbol('PAYMENTS_INSTANCE_NAME');

/** What an instance name may look like: it becomes part of tokens, store keys and the queue name. */
export const PAYMENTS_INSTANCE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Whether `name` designates the unnamed (default) instance. */
export const isDefaultPaymentsInstance = (name: string | undefined): boolean =>
  name === undefined || name === DEFAULT_PAYMENTS_INSTANCE;

/**
 * The token under which an instance exports one of its providers: the token itself for the unnamed
 * instance (so `constructor(payments: PaymentsService)` keeps working), a namespaced string for a
 * named one. Two instances are global at once, so their exports must not share a token.
 */
export function getPaymentsInstanceToken<T extends abstract new (...args: never[]) => unknown>(
  token: T,
  name?: string,
): T | string {
  return isDefaultPaymentsInstance(name) ? token : `nestjs-payments:${name}:${token.name}`;
}

/** The key prefix of an instance in a store shared between instances: `''` for the unnamed one, `'eu:'` for 'eu'. */
export const paymentsInstanceKeyPrefix = (name: string | undefined): string =>
  isDefaultPaymentsInstance(name) ? '' : `${name}:`;

/** What a `PaymentsWebhooksModule` reads of the `PaymentsModule` instance it belongs to. */
export interface PaymentsInstanceContext {
  name: string;
  environment: 'sandbox' | 'production';
  /** The instance's clock and timers (`PAYMENTS_RUNTIME`). */
  runtime: PaymentsRuntime;
}

/**
 * The token under which a `PaymentsModule` instance exports its `PaymentsInstanceContext` (a string per
 * name: two instances are global at once), for a receiver registered apart with `PaymentsWebhooksModule`.
 */
export const getPaymentsInstanceContextToken = (name?: string): string =>
  `nestjs-payments:${isDefaultPaymentsInstance(name) ? DEFAULT_PAYMENTS_INSTANCE : name}:context`;

/** Token of what one instance or one receiver is (name, route, queue), read at boot to refuse collisions. */
export const PAYMENTS_INSTANCE_DESCRIPTOR = Symbol('PAYMENTS_INSTANCE_DESCRIPTOR');

/** One `PaymentsModule` instance (`module`), or a receiver registered apart with `PaymentsWebhooksModule` (`receiver`). */
export interface PaymentsInstanceDescriptor {
  kind: 'module' | 'receiver';
  name: string;
  /** The route, or false when this instance registers none. */
  path: string | false;
  /** `<prefix>:<name>` of its BullMQ queue, when queued. */
  queue: string | undefined;
}
