import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { PaymentsHealthIndicator } from './payments.health-indicator.js';

/**
 * Provides `PaymentsHealthIndicator` (and imports `TerminusModule`), for an app's health module.
 *
 * @example
 * @Module({ imports: [PaymentsHealthModule], controllers: [HealthController] })
 * export class HealthModule {}
 */
@Module({
  imports: [TerminusModule],
  providers: [PaymentsHealthIndicator],
  exports: [PaymentsHealthIndicator, TerminusModule],
})
export class PaymentsHealthModule {}
