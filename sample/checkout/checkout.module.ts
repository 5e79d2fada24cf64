import { Module } from '@nestjs/common';
import { CheckoutPageController } from './checkout-page.controller.js';
import { CheckoutSessionFactory } from './checkout-session.factory.js';

/** The checkout page (`GET /`) and the factory of checkout sessions handed to the browser. */
@Module({
  controllers: [CheckoutPageController],
  providers: [CheckoutSessionFactory],
  exports: [CheckoutSessionFactory],
})
export class CheckoutModule {}
