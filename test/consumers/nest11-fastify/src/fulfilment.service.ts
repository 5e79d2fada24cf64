import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, type PaymentEvent } from 'nestjs-payments';

@Injectable()
export class FulfilmentService {
  runs = 0;

  @OnPaymentEvent('payment_intent.succeeded')
  paid(event: PaymentEvent<'payment_intent.succeeded'>): void {
    if (typeof event.id !== 'string') throw new Error('no event id');
    this.runs += 1;
  }
}
