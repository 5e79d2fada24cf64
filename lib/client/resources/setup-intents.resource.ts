import type { CreatedSetupIntent, CreateSetupIntentParams, SetupIntent } from '../payments.types.js';
import type { PaymentsRequester } from '../payments-request.interface.js';
import { assertParams, assertUuid } from '../payments-request.validation.js';

/**
 * `POST /setup_intents` and `GET /setup_intents/{id}` (saving, "vaulting", a payment method).
 *
 * @example const setup = await payments.setupIntents.create({});
 */
export class SetupIntentsResource {
  readonly #requester: PaymentsRequester;

  constructor(requester: PaymentsRequester) {
    this.#requester = requester;
  }

  /** Creates a setup intent; the answer includes the embed token to hand to the browser. */
  async create(params: CreateSetupIntentParams = {}): Promise<CreatedSetupIntent> {
    const body = assertParams(params, 'setupIntents.create');
    return this.#requester.request<CreatedSetupIntent>({ method: 'POST', path: '/setup_intents', body });
  }

  /**
   * Retrieves a setup intent. `id` must be a UUID; otherwise the call rejects with
   * `PaymentsInvalidArgumentError` and nothing is sent.
   */
  async retrieve(id: string): Promise<SetupIntent> {
    const checked = assertUuid(id, 'setupIntents.retrieve');
    return this.#requester.request<SetupIntent>({ method: 'GET', path: `/setup_intents/${checked}` });
  }
}
