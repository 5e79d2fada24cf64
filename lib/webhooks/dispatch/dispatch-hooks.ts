import type { Logger } from '@nestjs/common';
import type { PaymentEventHandlerRegistration } from '../contracts/payment-event-handler.types.js';
import type {
  DispatchSummary,
  PaymentsDispatchPlugin,
  RetrieveAnswer,
} from '../contracts/dispatch-plugin.interface.js';
import type { EventRecord, RecordIntentKind } from '../contracts/event-record.types.js';
import { DEFAULT_TERMINAL_STATES } from '../contracts/payments-reconcile.options.js';
import { describe } from './dispatch-summary.js';

/**
 * The plug-ins' hooks as the dispatcher calls them: sorted once by kind, so that a receiver without
 * plug-ins pays one length check per dispatch and per claimed run.
 */
export class DispatchHooks {
  /** Plug-ins that call some handlers themselves (the transactional inbox). */
  private readonly around: readonly PaymentsDispatchPlugin[];
  /** Plug-ins that end an intent's watch with a completion (reconciliation). */
  private readonly watchers: readonly PaymentsDispatchPlugin[];
  /** Plug-ins told what each dispatch did (reconciliation's watch list, the delivery listener). */
  private readonly after: readonly PaymentsDispatchPlugin[];
  /** Plug-ins that pace or hear about current-state retrieves (reconciliation). */
  private readonly retrieves: readonly PaymentsDispatchPlugin[];
  /** Plug-ins that say which retrieved states are dispatched (reconciliation's terminal states). */
  private readonly dispatching: readonly PaymentsDispatchPlugin[];

  constructor(
    plugins: readonly PaymentsDispatchPlugin[],
    private readonly logger: Pick<Logger, 'warn'>,
  ) {
    this.around = plugins.filter((plugin) => plugin.handles && plugin.aroundHandler);
    this.watchers = plugins.filter((plugin) => plugin.unwatches);
    this.after = plugins.filter((plugin) => plugin.afterDispatch);
    this.retrieves = plugins.filter((plugin) => plugin.retrieveDelayMs || plugin.afterRetrieve);
    this.dispatching = plugins.filter((plugin) => plugin.dispatchesRetrieved);
  }

  /**
   * Whether a superseded delivery's current state `state` is dispatched: a state reconciliation would
   * dispatch (its terminal states; the defaults without it). A recurring state is left to its webhook.
   */
  dispatchesRetrieved(kind: RecordIntentKind, state: string): boolean {
    if (this.dispatching.length === 0) return DEFAULT_TERMINAL_STATES[kind].has(state);
    for (const plugin of this.dispatching) if (plugin.dispatchesRetrieved!(kind, state)) return true;
    return false;
  }

  /** Whether any plug-in wants to hear about dispatches (the summary is only built then). */
  get listening(): boolean {
    return this.after.length !== 0;
  }

  /** The plug-in that calls `handler` itself, if any. */
  aroundOf(handler: PaymentEventHandlerRegistration): PaymentsDispatchPlugin | undefined {
    if (this.around.length === 0) return undefined;
    for (const plugin of this.around) if (plugin.handles!(handler)) return plugin;
    return undefined;
  }

  /** Whether completing a run of `record`'s state ends the intent's watch in the same call. */
  unwatches(record: EventRecord): boolean {
    if (this.watchers.length === 0 || record.state === undefined) return false;
    for (const plugin of this.watchers) if (plugin.unwatches!(record)) return true;
    return false;
  }

  /** Each plug-in's `afterDispatch`; one that throws is logged and changes nothing. */
  afterDispatch(summary: DispatchSummary): void {
    for (const plugin of this.after) {
      try {
        plugin.afterDispatch!(summary);
      } catch (error) {
        this.logger.warn(`The ${plugin.name} plug-in's afterDispatch threw and was ignored: ${describe(error)}`);
      }
    }
  }

  /** The longest wait any plug-in asks before a current-state retrieve (each reserves its turn). */
  retrieveDelayMs(now: number): number {
    let delay = 0;
    for (const plugin of this.retrieves) {
      if (!plugin.retrieveDelayMs) continue;
      try {
        delay = Math.max(delay, plugin.retrieveDelayMs(now));
      } catch (error) {
        this.logger.warn(`The ${plugin.name} plug-in's retrieveDelayMs threw and was ignored: ${describe(error)}`);
      }
    }
    return delay;
  }

  /** Each plug-in's `afterRetrieve`; one that throws is logged and changes nothing. */
  afterRetrieve(record: EventRecord, answer: RetrieveAnswer): void {
    for (const plugin of this.retrieves) {
      if (!plugin.afterRetrieve) continue;
      try {
        plugin.afterRetrieve(record, answer);
      } catch (error) {
        this.logger.warn(`The ${plugin.name} plug-in's afterRetrieve threw and was ignored: ${describe(error)}`);
      }
    }
  }
}
