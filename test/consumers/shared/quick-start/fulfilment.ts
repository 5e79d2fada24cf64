// fulfilment.ts: runs once per event, whatever the redeliveries
import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, PaymentEvent } from 'nestjs-payments';

@Injectable()
export class Fulfilment {
  readonly paid: string[] = []; // your orders service in a real app
  @OnPaymentEvent('payment_intent.succeeded') // a misspelt name does not compile
  onPaid(event: PaymentEvent<'payment_intent.succeeded'>) {
    this.paid.push(event.id);
  }
}
