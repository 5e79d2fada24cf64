import {
  BadGatewayException,
  Body,
  ConflictException,
  Controller,
  Get,
  Headers,
  HttpCode,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PaymentsError } from '../../lib/index.js';
import type { SampleConfig } from '../sample.config.js';
import { CheckoutTokenMissingError } from '../checkout/checkout-session.factory.js';
import { parseCreateOrderBody } from './create-order.dto.js';
import type { Order } from './order.model.js';
import { OrdersRepository } from './orders.repository.js';
import { OrdersService, type CreatedOrder } from './orders.service.js';

/** The order as the browser sees it. */
export type OrderView = Pick<Order, 'id' | 'amount' | 'currency' | 'status' | 'notes' | 'createdAt' | 'updatedAt'> & {
  /** What the payment waits for while the order is pending (`requires_capture`...), if a webhook said. */
  action?: string;
};

const view = (order: Order): OrderView => ({
  id: order.id,
  amount: order.amount,
  currency: order.currency,
  status: order.status,
  ...(order.action === undefined ? {} : { action: order.action }),
  notes: order.notes,
  createdAt: order.createdAt,
  updatedAt: order.updatedAt,
});

/**
 * `POST /orders`, `GET /orders/:id`, `POST /orders/:id/cancel`. The answers carry the order and the
 * checkout tokens, never the API key or the intent as the service sent it [A4].
 */
@Controller('orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly repository: OrdersRepository,
    private readonly config: ConfigService,
  ) {}

  @Post()
  async create(
    @Body() body: unknown,
    @Headers('origin') origin: string | undefined,
    @Headers('host') host: string | undefined,
  ): Promise<{ order: OrderView; checkout: CreatedOrder['checkout'] }> {
    const input = parseCreateOrderBody(
      body,
      this.config.getOrThrow<SampleConfig['shop']>('sample.shop').defaultCurrency,
    );
    let created: CreatedOrder;
    try {
      created = await this.orders.create(input, { origin, host });
    } catch (error) {
      // The library's errors never carry the key, but the browser needs none of their details.
      if (error instanceof PaymentsError || error instanceof CheckoutTokenMissingError)
        throw new BadGatewayException('the payment service could not create the payment');
      throw error;
    }
    return { order: view(created.order), checkout: created.checkout };
  }

  @Get(':id')
  find(@Param('id', new ParseUUIDPipe()) id: string): OrderView {
    const order = this.repository.findById(id);
    if (order === undefined) throw new NotFoundException('no such order');
    return view(order);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id', new ParseUUIDPipe()) id: string): OrderView {
    const existing = this.repository.findById(id);
    if (existing === undefined) throw new NotFoundException('no such order');
    const cancelled = this.orders.cancel(id);
    if (cancelled === undefined)
      throw new ConflictException(
        `the order is ${this.repository.findById(id)?.status ?? existing.status}; only a pending order can be cancelled`,
      );
    return view(cancelled);
  }
}
