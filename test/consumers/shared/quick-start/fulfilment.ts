// fulfilment.ts: runs once per event, whatever the redeliveries
import { Injectable } from '@nestjs/common';
import { OnPaymentEvent, PaymentEvent } from 'nestjs-payments';

@Injectable()
export class Fulfilment {
  readonly paid: string[] = []; // paid intents: your orders service in a real app
  // current: runs only while the intent is still succeeded (retrieved first; a late event is `superseded`)
  @OnPaymentEvent('payment_intent.succeeded', { current: true }) // a misspelt name does not compile
  onPaid(event: PaymentEvent<'payment_intent.succeeded'>) {
    // Key your effect on what identifies the order, the intent: a webhook and a reconciled event share it.
    const intentId = event.data.payment_intent?.id;
    if (intentId) this.paid.push(intentId);
  }
}
