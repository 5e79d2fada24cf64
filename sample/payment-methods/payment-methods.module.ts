import { Module } from '@nestjs/common';
import { CheckoutModule } from '../checkout/checkout.module.js';
import { PaymentMethodSetupEventsHandler } from './payment-method-setup-events.handler.js';
import { PaymentMethodSetupsRepository } from './payment-method-setups.repository.js';
import { PaymentMethodsController } from './payment-methods.controller.js';

/** Saving payment methods through setup intents; saved only on a verified `setup_intent.succeeded`. */
@Module({
  imports: [CheckoutModule],
  controllers: [PaymentMethodsController],
  providers: [PaymentMethodSetupsRepository, PaymentMethodSetupEventsHandler],
  exports: [PaymentMethodSetupsRepository],
})
export class PaymentMethodsModule {}
