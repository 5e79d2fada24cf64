import { Injectable, Logger } from '@nestjs/common';
import { OnPaymentEvent, type PaymentEvent, type PaymentEventContext, type SetupIntent } from '../../lib/index.js';
import { intentFromEvent } from '../shared/intent-from-event.util.js';
import { PaymentMethodSetupsRepository } from './payment-method-setups.repository.js';

type SetupFailureEvent = 'setup_intent.failed' | 'setup_intent.errored' | 'setup_intent.cancelled';

/**
 * Marks a payment method saved, or its saving failed, from verified `setup_intent.*` events only
 * (the reference: "marking a payment method as saved must wait for a webhook event"). Both moves
 * start from `pending` only, so a replayed or late event changes nothing.
 */
@Injectable()
export class PaymentMethodSetupEventsHandler {
  private readonly logger = new Logger(PaymentMethodSetupEventsHandler.name);

  constructor(private readonly setups: PaymentMethodSetupsRepository) {}

  @OnPaymentEvent('setup_intent.succeeded')
  async onSaved(event: PaymentEvent<'setup_intent.succeeded'>, ctx: PaymentEventContext): Promise<void> {
    const intent = await intentFromEvent<SetupIntent>(event.data.setup_intent, [], ctx);
    const setup = this.setups.findBySetupIntent(intent.id);
    if (setup === undefined) {
      this.logger.warn(`${event.event} ${event.id}: no payment-method setup for setup intent ${intent.id}`);
      return;
    }
    if (this.setups.transition(setup.id, ['pending'], 'saved', event.event)) {
      this.logger.log(`payment method of setup ${setup.id} saved`);
    }
  }

  @OnPaymentEvent('setup_intent.failed', 'setup_intent.errored', 'setup_intent.cancelled')
  async onFailed(event: PaymentEvent<SetupFailureEvent>, ctx: PaymentEventContext): Promise<void> {
    const intent = await intentFromEvent<SetupIntent>(event.data.setup_intent, [], ctx);
    const setup = this.setups.findBySetupIntent(intent.id);
    if (setup === undefined) {
      this.logger.warn(`${event.event} ${event.id}: no payment-method setup for setup intent ${intent.id}`);
      return;
    }
    this.setups.transition(setup.id, ['pending'], 'failed', event.event);
  }
}
