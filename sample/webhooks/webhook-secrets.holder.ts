import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { hmacVerifier, standardWebhooksVerifier, type WebhookVerifier } from '../../lib/index.js';
import { type WebhookVerificationInput, type WebhookVerificationResult } from '../../lib/webhooks/index.js';
import type { SampleConfig, SampleWebhookScheme } from '../sample.config.js';

/**
 * Holds the webhook endpoint's secret(s) and verifies deliveries with them.
 *
 * Why a holder: the verifier needs the endpoint secret, but when the sample registers its own
 * endpoint (`POST /webhook_endpoints`, with the local simulator), the secret only exists after the
 * app is up, because registration needs the app's URL and the list of handled event types that
 * Nest discovers at boot. So `PaymentsModule` gets `holder.verifier` (a `WebhookVerifier` that
 * delegates to the built-in verifier once secrets are set) and bootstrap calls `setSecrets` right
 * after registering. Until then every delivery is refused with 401, which is right: nothing can be
 * verified yet, and the service retries. With `PAYMENTS_WEBHOOK_SECRET` set, the secrets are known
 * at boot and set at once.
 */
@Injectable()
export class WebhookSecretsHolder {
  private readonly logger = new Logger(WebhookSecretsHolder.name);
  readonly #scheme: SampleWebhookScheme;
  #delegate: WebhookVerifier | undefined;

  /** The verifier to pass as `webhooks.verifier`. */
  readonly verifier: WebhookVerifier = {
    verify: (input: WebhookVerificationInput): WebhookVerificationResult | Promise<WebhookVerificationResult> =>
      this.#delegate === undefined ? { valid: false, reason: 'no_endpoint_secret_yet' } : this.#delegate.verify(input),
  };

  constructor(config: ConfigService) {
    const webhooks = config.getOrThrow<SampleConfig['webhooks']>('sample.webhooks');
    this.#scheme = webhooks.scheme;
    if (webhooks.secrets.length > 0) this.setSecrets(webhooks.secrets);
  }

  /** Whether secrets are set (from `PAYMENTS_WEBHOOK_SECRET`, or by registration). */
  get ready(): boolean {
    return this.#delegate !== undefined;
  }

  /**
   * Sets the secret(s) and builds the built-in verifier for the scheme. Several secrets while
   * rotating: any one may match. Throws (a configuration error naming the option) on a bad secret.
   */
  setSecrets(secrets: readonly string[]): void {
    const scheme = this.#scheme;
    this.#delegate =
      scheme.kind === 'standard-webhooks'
        ? standardWebhooksVerifier({ secrets })
        : hmacVerifier({
            secrets,
            header: scheme.header,
            ...(scheme.algorithm ? { algorithm: scheme.algorithm } : {}),
            ...(scheme.encoding ? { encoding: scheme.encoding } : {}),
            ...(scheme.prefix ? { prefix: scheme.prefix } : {}),
            ...(scheme.timestampHeader ? { timestampHeader: scheme.timestampHeader } : {}),
            ...(scheme.signedPayload ? { signedPayload: scheme.signedPayload } : {}),
          });
    this.logger.log(
      `webhook verification ready (${scheme.kind}, ${secrets.length} secret${secrets.length === 1 ? '' : 's'})`,
    );
  }
}
