import type { Logger } from '@nestjs/common';
import type { DispatchSummary, PaymentsDispatchPlugin } from '../contracts/dispatch-plugin.interface.js';
import type { PaymentDeliveryListener } from '../contracts/payment-delivery-listener.interface.js';
import { notifyDeliveryListener, toHandlerRecords } from '../support/delivery-listener.notify.js';

/**
 * The opt-in `webhooks.deliveryListener` (a `PaymentDeliveryJournal`, or the app's own) as a plug-in of
 * the dispatcher: told what each dispatch did (`onDispatch`). A listener that throws is logged at warn
 * level and never changes the outcome.
 */
export class DeliveryListenerPlugin implements PaymentsDispatchPlugin {
  readonly name = 'deliveryListener';

  constructor(
    private readonly listener: PaymentDeliveryListener,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  afterDispatch({ event, meta, outcome, results, finishedAt }: DispatchSummary): void {
    if (this.listener.onDispatch === undefined) return;
    notifyDeliveryListener(
      this.listener,
      'onDispatch',
      {
        eventId: event.id,
        type: event.event,
        outcome,
        handlers: toHandlerRecords(results),
        ...(meta.deliveryAttempt === undefined ? {} : { deliveryAttempt: meta.deliveryAttempt }),
        receivedAt: meta.receivedAt,
        finishedAt: new Date(finishedAt),
      },
      this.logger,
    );
  }
}
