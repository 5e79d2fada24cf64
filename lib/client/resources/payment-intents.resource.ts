import type { CreatedPaymentIntent, CreatePaymentIntentParams, PaymentIntent } from '../payments.types.js';
import type { PaymentsRequester } from '../payments-request.interface.js';
import type { CreatedIntentListeners, PaymentsCreateOptions } from '../payments-created-intents.js';
import { assertParams, assertUuid } from '../payments-request.validation.js';

/**
 * `POST /payment_intents` and `GET /payment_intents/{id}`.
 *
 * @example const intent = await payments.paymentIntents.create({ amount: 1999 });
 */
export class PaymentIntentsResource {
  readonly #requester: PaymentsRequester;
  readonly #created: CreatedIntentListeners | undefined;

  constructor(requester: PaymentsRequester, created?: CreatedIntentListeners) {
    this.#requester = requester;
    this.#created = created;
  }

  /** Creates a payment intent; the answer includes the embed token to hand to the browser. */
  async create(
    params: CreatePaymentIntentParams = {},
    options: PaymentsCreateOptions = {},
  ): Promise<CreatedPaymentIntent> {
    const body = assertParams(params, 'paymentIntents.create');
    const intent = await this.#requester.request<CreatedPaymentIntent>({
      method: 'POST',
      path: '/payment_intents',
      body,
    });
    await this.#created?.notify('payment_intent', intent, options);
    return intent;
  }

  /**
   * Retrieves a payment intent, the source of truth for its `state`. `id` must be a UUID; otherwise
   * the call rejects with `PaymentsInvalidArgumentError` and nothing is sent.
   */
  async retrieve(id: string): Promise<PaymentIntent> {
    const checked = assertUuid(id, 'paymentIntents.retrieve');
    return this.#requester.request<PaymentIntent>({ method: 'GET', path: `/payment_intents/${checked}` });
  }
}
