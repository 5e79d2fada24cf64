import {
  BadGatewayException,
  Controller,
  Get,
  Headers,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { PaymentsError, PaymentsService, type SetupIntent } from '../../lib/index.js';
import {
  CheckoutSessionFactory,
  CheckoutTokenMissingError,
  type CheckoutSession,
} from '../checkout/checkout-session.factory.js';
import type { PaymentMethodSetup } from './payment-method-setup.model.js';
import { PaymentMethodSetupsRepository } from './payment-method-setups.repository.js';

/** A setup as the browser sees it. */
export type PaymentMethodSetupView = Pick<PaymentMethodSetup, 'id' | 'status' | 'reason' | 'createdAt' | 'updatedAt'>;

const view = (setup: PaymentMethodSetup): PaymentMethodSetupView => ({
  id: setup.id,
  status: setup.status,
  ...(setup.reason === undefined ? {} : { reason: setup.reason }),
  createdAt: setup.createdAt,
  updatedAt: setup.updatedAt,
});

/**
 * `POST /payment-methods/setup` creates a setup intent and answers what the browser needs to save a
 * payment method in the embedded form; `GET /payment-methods/setup/:id` tells whether it was saved.
 */
@Controller('payment-methods/setup')
export class PaymentMethodsController {
  constructor(
    private readonly payments: PaymentsService,
    private readonly setups: PaymentMethodSetupsRepository,
    private readonly checkout: CheckoutSessionFactory,
  ) {}

  @Post()
  async create(
    @Headers('origin') origin: string | undefined,
    @Headers('host') host: string | undefined,
  ): Promise<{ setup: PaymentMethodSetupView; checkout: CheckoutSession }> {
    const id = randomUUID();
    const framing = this.checkout.framingFor({ origin, host });
    let intent: SetupIntent;
    let checkout: CheckoutSession;
    try {
      intent = await this.payments.setupIntents.create({
        metadata: { payment_method_setup_id: id },
        ...this.checkout.intentParams(framing),
      });
      checkout = this.checkout.forIntent(intent, framing);
    } catch (error) {
      if (error instanceof PaymentsError || error instanceof CheckoutTokenMissingError)
        throw new BadGatewayException('the payment service could not start saving a payment method');
      throw error;
    }
    const setup = this.setups.insert(id, intent.id);
    return { setup: view(setup), checkout };
  }

  @Get(':id')
  find(@Param('id', new ParseUUIDPipe()) id: string): PaymentMethodSetupView {
    const setup = this.setups.findById(id);
    if (setup === undefined) throw new NotFoundException('no such payment-method setup');
    return view(setup);
  }
}
