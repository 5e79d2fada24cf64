import { Injectable, Logger } from '@nestjs/common';
import { PaymentsService } from '../../lib/index.js';
import { PaymentEventsRegistry } from '../../lib/webhooks/index.js';
import { WebhookSecretsHolder } from './webhook-secrets.holder.js';

/** Route of the sample's webhook receiver (the module's default, spelt out because the URL is registered). */
export const SAMPLE_WEBHOOKS_PATH = 'payments/webhooks';

/** The registered endpoint, without its secret (which went to the holder). */
export interface RegisteredWebhookEndpoint {
  id: string;
  url: string;
  events: string[];
}

/**
 * Registers the sample's webhook endpoint with the service (`POST /webhook_endpoints`), subscribed to
 * exactly the event types its handlers listen to [W10], and gives the returned secret to the
 * `WebhookSecretsHolder`. Called by bootstrap once the app's URL is known (after `listen`). Does
 * nothing when the secret came from `PAYMENTS_WEBHOOK_SECRET` (an endpoint made in the dashboard).
 */
@Injectable()
export class WebhookEndpointRegistrar {
  private readonly logger = new Logger(WebhookEndpointRegistrar.name);

  constructor(
    private readonly payments: PaymentsService,
    private readonly registry: PaymentEventsRegistry,
    private readonly secrets: WebhookSecretsHolder,
  ) {}

  /** Registers `${publicUrl}/payments/webhooks` unless secrets are configured. */
  async ensureRegistered(publicUrl: string): Promise<RegisteredWebhookEndpoint | undefined> {
    if (this.secrets.ready) {
      this.logger.log('webhook secret configured: using the existing endpoint');
      return undefined;
    }
    const url = `${publicUrl.replace(/\/+$/, '')}/${SAMPLE_WEBHOOKS_PATH}`;
    const events = this.registry.handledEventTypes();
    const endpoint = await this.payments.webhookEndpoints.create({ url, events });
    this.secrets.setSecrets([endpoint.secret]);
    this.logger.log(`webhook endpoint ${endpoint.id} registered for ${events.length} event types`);
    return { id: endpoint.id, url, events };
  }
}
