import type { INestApplication } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import { PaymentsSimulator, type PaymentsSimulatorOptions } from '../lib/testing/index.js';
import type { SampleConfig } from './sample.config.js';
import { WebhookEndpointRegistrar, type RegisteredWebhookEndpoint } from './webhooks/webhook-endpoint.registrar.js';

/** A simulator started for the sample, and the environment that points the sample at it. */
export interface EmbeddedSimulator {
  simulator: PaymentsSimulator;
  /** `PAYMENTS_*` variables to merge over `process.env`. The API key is a fresh random one. */
  env: Record<string, string>;
}

/**
 * Starts the local `PaymentsSimulator` (on `port`, default a free one) with a fresh random API key,
 * and returns the variables that point the sample at it. The simulator signs with Standard Webhooks.
 * `/embed/checkout` is the simulator's address of the embedded form (not a fact about the service).
 */
export async function startEmbeddedSimulator(
  port = 0,
  options: PaymentsSimulatorOptions = {},
): Promise<EmbeddedSimulator> {
  const apiKey = `sk_sandbox_${randomBytes(18).toString('base64url')}`;
  const simulator = new PaymentsSimulator({
    ...options,
    apiKeys: [apiKey],
    signature: { scheme: 'standard-webhooks' },
  });
  const baseUrl = await simulator.start(port);
  return {
    simulator,
    env: {
      PAYMENTS_BASE_URL: baseUrl,
      PAYMENTS_API_KEY: apiKey,
      PAYMENTS_ENVIRONMENT: 'sandbox',
      PAYMENTS_ALLOW_INSECURE_HTTP: 'true',
      PAYMENTS_CHECKOUT_URL: `${baseUrl}/embed/checkout`,
      PAYMENTS_WEBHOOK_SCHEME: 'standard-webhooks',
      SAMPLE_EMBEDDED_SIMULATOR: 'true',
      // Registered at boot instead: the simulator hands out the secret.
      PAYMENTS_WEBHOOK_SECRET: '',
    },
  };
}

/**
 * Listens on the configured port, then makes webhook verification ready: registers the endpoint
 * (`POST /webhook_endpoints`, handled event types only) unless `PAYMENTS_WEBHOOK_SECRET` was given.
 * Registration comes after `listen` because the service may deliver as soon as it knows the URL.
 */
export async function listenAndRegister(
  app: INestApplication,
): Promise<{ url: string; endpoint: RegisteredWebhookEndpoint | undefined }> {
  const config = app.get(ConfigService).getOrThrow<SampleConfig>('sample');
  await app.listen(config.port);
  const endpoint = await app.get(WebhookEndpointRegistrar).ensureRegistered(config.publicUrl);
  return { url: `http://localhost:${config.port}`, endpoint };
}
