import { Module } from '@nestjs/common';
import { PaymentDeliveryJournal } from '../../lib/index.js';
import { WebhookSecretsHolder } from './webhook-secrets.holder.js';

/** Events the operator view remembers (the journal is in memory: a restart empties it). */
const JOURNAL_ENTRIES = 200;

/**
 * Provides the `WebhookSecretsHolder` and the `PaymentDeliveryJournal` of recent deliveries.
 * Imported by `PaymentsModule.forRootAsync({ imports })` so the options factory can hand both to the
 * module, by bootstrap code to fill the secrets, and by the operator view to read the journal.
 */
@Module({
  providers: [
    WebhookSecretsHolder,
    { provide: PaymentDeliveryJournal, useFactory: () => new PaymentDeliveryJournal({ maxEntries: JOURNAL_ENTRIES }) },
  ],
  exports: [WebhookSecretsHolder, PaymentDeliveryJournal],
})
export class SampleWebhooksModule {}
