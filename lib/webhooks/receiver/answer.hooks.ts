import type { Logger } from '@nestjs/common';
import type { DeliveryAnswer, PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';

/**
 * The plug-ins' `afterAnswer` hooks, as the receiver and the route's filter call them: sorted once, so
 * that a receiver without one pays a length check per delivery and builds no record.
 */
export class AnswerHooks {
  private readonly hooks: readonly PaymentsDispatchPlugin[];

  constructor(
    plugins: readonly PaymentsDispatchPlugin[] | undefined,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {
    this.hooks = (plugins ?? []).filter((plugin) => plugin.afterAnswer);
  }

  /** Whether any plug-in wants to hear about answers (the record is only built then). */
  get listening(): boolean {
    return this.hooks.length !== 0;
  }

  /** Each plug-in's `afterAnswer`; one that throws is logged and changes nothing. */
  tell(answer: DeliveryAnswer): void {
    for (const plugin of this.hooks) {
      try {
        plugin.afterAnswer!(answer);
      } catch (error) {
        this.logger.warn(
          `The ${plugin.name} plug-in's afterAnswer threw and was ignored: ${error instanceof Error ? error.name : typeof error}`,
        );
      }
    }
  }
}
