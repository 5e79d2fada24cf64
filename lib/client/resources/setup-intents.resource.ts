import type { CreatedSetupIntent, CreateSetupIntentParams, SetupIntent } from '../payments.types.js';
import type { PaymentsRequester } from '../payments-request.interface.js';
import type { CreatedIntentListeners, PaymentsCreateOptions } from '../payments-created-intents.js';
import { assertParams, assertUuid } from '../payments-request.validation.js';

/**
 * `POST /setup_intents` and `GET /setup_intents/{id}` (saving, "vaulting", a payment method).
 *
 * @example const setup = await payments.setupIntents.create({});
 */
export class SetupIntentsResource {
  readonly #requester: PaymentsRequester;
  readonly #created: CreatedIntentListeners | undefined;

  constructor(requester: PaymentsRequester, created?: CreatedIntentListeners) {
    this.#requester = requester;
    this.#created = created;
  }

  /** Creates a setup intent; the answer includes the embed token to hand to the browser. */
  async create(params: CreateSetupIntentParams = {}, options: PaymentsCreateOptions = {}): Promise<CreatedSetupIntent> {
    const body = assertParams(params, 'setupIntents.create');
    const intent = await this.#requester.request<CreatedSetupIntent>({ method: 'POST', path: '/setup_intents', body });
    await this.#created?.notify('setup_intent', intent, options);
    return intent;
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
