import { Module } from '@nestjs/common';
import { CheckoutModule } from '../checkout/checkout.module.js';
import { FulfilmentService } from './fulfilment.service.js';
import { OrderPaymentEventsHandler } from './order-payment-events.handler.js';
import { OrdersController } from './orders.controller.js';
import { OrdersRepository } from './orders.repository.js';
import { OrdersService } from './orders.service.js';

/** Orders, their payment intents, and the handlers that settle them from verified webhooks. */
@Module({
  imports: [CheckoutModule],
  controllers: [OrdersController],
  providers: [OrdersRepository, OrdersService, FulfilmentService, OrderPaymentEventsHandler],
  exports: [OrdersRepository, OrdersService, FulfilmentService],
})
export class OrdersModule {}
