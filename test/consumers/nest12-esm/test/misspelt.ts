// Must NOT compile: the event name is misspelt (test/consumers/run.mjs checks the error names it).
import { Injectable } from '@nestjs/common';
import { OnPaymentEvent } from 'nestjs-payments';

@Injectable()
export class Misspelt {
  @OnPaymentEvent('payment_intent.succeded')
  paid(): void {}
}
