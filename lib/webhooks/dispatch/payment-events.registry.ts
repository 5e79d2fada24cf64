import { Injectable } from '@nestjs/common';
import type { PaymentEventHandlerRegistration } from '../contracts/payment-event-handler.types.js';
import {
  PAYMENT_EVENT_TYPES,
  type PaymentEventPattern,
  type PaymentEventType,
} from '../contracts/payment-event.types.js';

export type { PaymentEventHandlerRegistration } from '../contracts/payment-event-handler.types.js';

const isWildcard = (pattern: PaymentEventPattern): boolean => pattern === '*' || pattern.endsWith('.*');

/**
 * Which handlers listen to which events. Filled at boot by the explorer; inject it to subscribe your
 * webhook endpoint to exactly the events your app handles (the reference asks merchants to subscribe
 * only to those).
 *
 * @example
 * await payments.webhookEndpoints.create({ url, events: registry.handledEventTypes() });
 */
@Injectable()
export class PaymentEventsRegistry {
  readonly #handlers: PaymentEventHandlerRegistration[] = [];
  #loader: (() => void) | undefined;
  /**
   * Handlers of each known name, built once and kept between deliveries (`handlersFor` runs on each);
   * reset by `register`. Only known names can have handlers, so the map is bounded by them.
   */
  #byType: ReadonlyMap<string, readonly PaymentEventHandlerRegistration[]> | undefined;

  /**
   * Set by the explorer: discovery runs on first use if a lifecycle hook (say, a queue worker starting
   * in its own `onModuleInit`) reads the registry before the explorer's `onModuleInit` ran.
   */
  setLoader(loader: () => void): void {
    this.#loader = loader;
  }

  /** Adds a handler. Returns false (and adds nothing) when a handler with the same id exists. */
  register(handler: PaymentEventHandlerRegistration): boolean {
    if (this.#handlers.some((existing) => existing.id === handler.id)) return false;
    // Written out, not spread: on Node 20 `{ ...handler, patterns }` gives each registration a map of its
    // own, and the dispatcher reads every one of them at the same places.
    this.#handlers.push(
      Object.freeze({
        id: handler.id,
        patterns: Object.freeze([...handler.patterns]),
        options: handler.options,
        invoke: handler.invoke,
      }),
    );
    this.#byType = undefined;
    return true;
  }

  /** Every registered handler, in discovery order. */
  handlers(): readonly PaymentEventHandlerRegistration[] {
    this.load();
    return [...this.#handlers];
  }

  /**
   * Event names at least one handler listens to, sorted. Wildcards are expanded against the known
   * names (the documented ones, plus names subscribed to exactly, e.g. added by declaration merging);
   * `'*'` stands for all of them.
   */
  handledEventTypes(): PaymentEventType[] {
    this.load();
    return this.knownEventTypes()
      .filter((type) => this.handlersFor(type).length > 0)
      .sort();
  }

  /**
   * Handlers bound to `type`. A wildcard matches only known names, so an undocumented name that no
   * handler names exactly reaches no handler (it is answered 200 and logged at debug).
   */
  handlersFor(type: string): readonly PaymentEventHandlerRegistration[] {
    this.load();
    this.#byType ??= new Map(
      this.knownEventTypes().map((known) => [
        known,
        Object.freeze(this.#handlers.filter((handler) => handler.patterns.some((pattern) => matches(pattern, known)))),
      ]),
    );
    // An unknown name has no handler: a handler naming it exactly would have made it known.
    return this.#byType.get(type) ?? NO_HANDLERS;
  }

  private load(): void {
    const loader = this.#loader;
    if (loader === undefined) return;
    this.#loader = undefined;
    loader();
  }

  private knownEventTypes(): PaymentEventType[] {
    const names = new Set<string>(PAYMENT_EVENT_TYPES);
    for (const handler of this.#handlers) {
      for (const pattern of handler.patterns) {
        if (!isWildcard(pattern)) names.add(pattern);
      }
    }
    return [...names] as PaymentEventType[];
  }
}

const NO_HANDLERS: readonly PaymentEventHandlerRegistration[] = Object.freeze([]);

/** Whether `pattern` covers the known name `type`. */
function matches(pattern: PaymentEventPattern, type: string): boolean {
  if (pattern === type) return true;
  if (pattern === '*') return true;
  return pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1));
}
