import { Module } from '@nestjs/common';
import { WebhookSecretsHolder } from './webhook-secrets.holder.js';

/**
 * Provides the `WebhookSecretsHolder`. Imported by `PaymentsModule.forRootAsync({ imports })` so the
 * options factory can hand its verifier to the module, and by bootstrap code to fill it.
 */
@Module({ providers: [WebhookSecretsHolder], exports: [WebhookSecretsHolder] })
export class SampleWebhooksModule {}
