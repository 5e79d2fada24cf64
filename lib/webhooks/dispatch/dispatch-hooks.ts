import type { Logger } from '@nestjs/common';
import type { PaymentEventHandlerRegistration } from '../contracts/payment-event-handler.types.js';
import type { DispatchSummary, PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import { describe } from './dispatch-summary.js';

/**
 * The plug-ins' hooks as the dispatcher calls them: sorted once by kind, so that a receiver without
 * plug-ins pays one length check per dispatch and per claimed run.
 */
export class DispatchHooks {
  /** Plug-ins that run some handlers themselves (the transactional inbox). */
  private readonly runners: readonly PaymentsDispatchPlugin[];
  /** Plug-ins told what each dispatch did (reconciliation's watch list, the delivery listener). */
  private readonly after: readonly PaymentsDispatchPlugin[];

  constructor(
    plugins: readonly PaymentsDispatchPlugin[],
    private readonly logger: Pick<Logger, 'warn'>,
  ) {
    this.runners = plugins.filter((plugin) => plugin.runsHandler && plugin.runHandler);
    this.after = plugins.filter((plugin) => plugin.afterDispatch);
  }

  /** Whether any plug-in wants to hear about dispatches (the summary is only built then). */
  get listening(): boolean {
    return this.after.length !== 0;
  }

  /** The plug-in that runs `handler` itself, if any. */
  runnerOf(handler: PaymentEventHandlerRegistration): PaymentsDispatchPlugin | undefined {
    if (this.runners.length === 0) return undefined;
    for (const plugin of this.runners) if (plugin.runsHandler!(handler)) return plugin;
    return undefined;
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
}
