import type { Logger } from '@nestjs/common';
import { fail, isObject } from '../../errors/payments-option.checks.js';
import type {
  DeliveryAnswer,
  DispatchSummary,
  PaymentsDispatchPlugin,
} from '../contracts/dispatch-plugin.interface.js';
import type {
  PaymentDeliveryListener,
  PaymentReconcileRecord,
} from '../contracts/payment-delivery-listener.interface.js';
import type { PaymentsReceiverPlugin } from '../contracts/payments-receiver-plugin.interface.js';
import type { ResolvedWebhooksOptions } from '../contracts/payments-webhooks.options.js';
import { webhooksLogger } from '../log/receiver.logger.js';
import { notifyDeliveryListener, toHandlerRecords } from './delivery-listener.notify.js';

/**
 * The opt-in `webhooks.deliveryListener` (a `PaymentDeliveryJournal`, or the app's own) as hooks of the
 * receiver: the one place a listener is called from. Told what each delivery was answered (`onDelivery`,
 * `onRejection`), what each dispatch did (`onDispatch`) and what the reconciler did (`onReconcile`). A
 * listener that throws is logged at warn level and never changes the outcome.
 */
export class DeliveryListenerPlugin implements PaymentsDispatchPlugin {
  readonly name = 'deliveryListener';
  readonly afterDispatch?: (summary: DispatchSummary) => void;
  readonly afterAnswer?: (answer: DeliveryAnswer) => void;
  readonly onReconcile?: (record: PaymentReconcileRecord) => void;

  constructor(
    private readonly listener: PaymentDeliveryListener,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {
    // Only the hooks the listener has: the receiver skips the others at no cost.
    if (listener.onDispatch) this.afterDispatch = (summary) => this.dispatched(summary);
    if (listener.onDelivery || listener.onRejection) this.afterAnswer = (answer) => this.answered(answer);
    if (listener.onReconcile)
      this.onReconcile = (record) => notifyDeliveryListener(this.listener, 'onReconcile', record, this.logger);
  }

  private dispatched({ event, meta, outcome, results, finishedAt }: DispatchSummary): void {
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

  private answered(answer: DeliveryAnswer): void {
    if (answer.kind === 'answered') notifyDeliveryListener(this.listener, 'onDelivery', answer.record, this.logger);
    else notifyDeliveryListener(this.listener, 'onRejection', answer.record, this.logger);
  }
}

/** Checks `webhooks.deliveryListener`: an object with at least one of the listener's methods. */
export function resolveDeliveryListener(raw: unknown): PaymentDeliveryListener | undefined {
  if (raw === undefined) return undefined;
  if (
    !isObject(raw) ||
    (typeof raw['onDelivery'] !== 'function' &&
      typeof raw['onDispatch'] !== 'function' &&
      typeof raw['onRejection'] !== 'function' &&
      typeof raw['onReconcile'] !== 'function')
  ) {
    fail(
      'webhooks.deliveryListener',
      'must implement PaymentDeliveryListener (onDelivery, onDispatch, onRejection and/or onReconcile)',
      'pass `new PaymentDeliveryJournal()` or omit it',
    );
  }
  return raw as PaymentDeliveryListener;
}

/** The delivery listener's hooks for `webhooks`, or undefined without `webhooks.deliveryListener`. */
export function deliveryListenerHooks(webhooks: ResolvedWebhooksOptions): DeliveryListenerPlugin | undefined {
  return webhooks.deliveryListener
    ? new DeliveryListenerPlugin(webhooks.deliveryListener, webhooksLogger(webhooks))
    : undefined;
}

/** `webhooks.deliveryListener` as a plug-in: no provider, hooks only. */
export function deliveryListenerPlugin(): PaymentsReceiverPlugin {
  return Object.freeze({
    name: 'deliveryListener',
    hooks: { useFactory: deliveryListenerHooks },
  });
}
