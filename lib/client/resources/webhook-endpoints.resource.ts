import type { CreateWebhookEndpointParams, WebhookEndpoint } from '../payments.types.js';
import type { PaymentsRequester } from '../payments-request.interface.js';
import { assertParams } from '../payments-request.validation.js';

/**
 * `POST /webhook_endpoints`. The answer carries the endpoint's `secret`: store it like a password
 * and give it to your webhook verifier.
 *
 * @example const endpoint = await payments.webhookEndpoints.create({ url: 'https://shop.example/payments/webhooks' });
 */
export class WebhookEndpointsResource {
  readonly #requester: PaymentsRequester;

  constructor(requester: PaymentsRequester) {
    this.#requester = requester;
  }

  /** Creates a webhook endpoint (one per environment, each with its own URL). */
  async create(params: CreateWebhookEndpointParams): Promise<WebhookEndpoint> {
    const body = assertParams(params, 'webhookEndpoints.create');
    return this.#requester.request<WebhookEndpoint>({ method: 'POST', path: '/webhook_endpoints', body });
  }
}
