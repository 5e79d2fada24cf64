import { describe, expect, it } from '@jest/globals';
import { ConfigService } from '@nestjs/config';
import { randomBytes } from 'node:crypto';
import { createPaymentEvent, signWebhook } from '../../../lib/testing/index.js';
import type { SampleConfig } from '../../../sample/sample.config.js';
import { WebhookSecretsHolder } from '../../../sample/webhooks/webhook-secrets.holder.js';

const secret = (): string => `whsec_${randomBytes(24).toString('base64')}`;
const holderWith = (webhooks: SampleConfig['webhooks']): WebhookSecretsHolder =>
  new WebhookSecretsHolder(new ConfigService({ sample: { webhooks } }));
const input = (signingSecret: string) => {
  const { rawBody, headers } = signWebhook(createPaymentEvent('payment_intent.succeeded'), {
    scheme: 'standard-webhooks',
    secret: signingSecret,
  });
  return { rawBody: Buffer.from(rawBody), headers };
};

describe('WebhookSecretsHolder (the verifier handed to PaymentsModule before the endpoint exists)', () => {
  it('[W5] refuses every delivery until the endpoint secret is set', async () => {
    const holder = holderWith({ secrets: [], scheme: { kind: 'standard-webhooks' } });
    expect(holder.ready).toBe(false);
    await expect(Promise.resolve(holder.verifier.verify(input(secret())))).resolves.toEqual({
      valid: false,
      reason: 'no_endpoint_secret_yet',
    });
  });

  it('verifies with the secret registration handed it', async () => {
    const holder = holderWith({ secrets: [], scheme: { kind: 'standard-webhooks' } });
    const endpointSecret = secret();
    holder.setSecrets([endpointSecret]);
    expect(holder.ready).toBe(true);
    await expect(Promise.resolve(holder.verifier.verify(input(endpointSecret)))).resolves.toEqual({ valid: true });
    await expect(Promise.resolve(holder.verifier.verify(input(secret())))).resolves.toMatchObject({ valid: false });
  });

  it('is ready at once with secrets from PAYMENTS_WEBHOOK_SECRET', async () => {
    const configured = secret();
    const holder = holderWith({ secrets: [configured], scheme: { kind: 'standard-webhooks' } });
    expect(holder.ready).toBe(true);
    await expect(Promise.resolve(holder.verifier.verify(input(configured)))).resolves.toEqual({ valid: true });
  });

  it('[W8] verifies an HMAC scheme described by the configuration', async () => {
    const hmacSecret = randomBytes(32).toString('hex');
    const scheme = { kind: 'hmac' as const, header: 'x-signature', prefix: 'sha256=' };
    const holder = holderWith({ secrets: [hmacSecret], scheme });
    const { rawBody, headers } = signWebhook(createPaymentEvent('payment_intent.succeeded'), {
      scheme: 'hmac',
      secret: hmacSecret,
      header: 'x-signature',
      prefix: 'sha256=',
    });
    await expect(Promise.resolve(holder.verifier.verify({ rawBody: Buffer.from(rawBody), headers }))).resolves.toEqual({
      valid: true,
    });
  });
});
